"""A Python program that never imports TensorFlow (numpy only).

Stands for: a script launched by mistake, or a pre-processing step, that does about half
a second of numpy work and exits 0. tflaunch should see the process start and end with
no TensorFlow phases at all: spawn only (no import, devices, ..., no TRUTH line).

Args: --steps N (default 30): accepted for uniformity; sets the number of work rounds.
"""
import argparse
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    start = time.monotonic()
    rounds, total = 0, 0.0
    # About 0.5 s of real work, whatever the machine's speed.
    while time.monotonic() - start < 0.5 or rounds < args.steps:
        a = rng.normal(size=(120, 120))
        total += float(np.linalg.eigvalsh(a @ a.T).max())
        rounds += 1
    print(f"no TensorFlow here: {rounds} rounds, mean top eigenvalue {total / rounds:.2f}")


if __name__ == "__main__":
    main()
