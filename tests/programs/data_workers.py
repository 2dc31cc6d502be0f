"""Training fed by a multiprocessing input pipeline (2 spawned workers, no TF in them).

Stands for: a script whose data loading runs in a Python multiprocessing.Pool (like a
PyTorch-style DataLoader or a preprocessing farm): 2 workers started with 'spawn'
generate numpy batches, and the main process trains with model.train_on_batch.
TensorFlow is imported only inside main(), so the spawned workers (which re-import this
file as __mp_main__) never import it -- tflaunch should see child processes without TF.

Phases tflaunch should observe: spawn, import, devices, build, compile, data (pool
start-up and first batch), first_step, steady.

Args: --steps N (default 30): total train_on_batch calls.
Writes `TRUTH first_step_end=<time.time()>` to stderr after the first train_on_batch.
"""
import argparse
import multiprocessing as mp
import sys
import time

import numpy as np

BATCH = 32


def make_batch(seed):
    """Runs in a worker: numpy only."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, 16)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    return x, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    ctx = mp.get_context("spawn")
    # Start the workers before importing TensorFlow (also what careful real scripts do).
    with ctx.Pool(2) as pool:
        batches = pool.imap(make_batch, range(args.steps), chunksize=2)

        import keras
        import tensorflow as tf  # noqa: F401  (main process only)

        model = keras.Sequential([
            keras.Input(shape=(16,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(1),
        ])
        model.compile(optimizer="adam", loss="mse")

        for step, (x, y) in enumerate(batches):
            loss = model.train_on_batch(x, y)
            if step == 0:
                sys.stderr.write(f"TRUTH first_step_end={time.time()!r}\n")
                sys.stderr.flush()
            if (step + 1) % 10 == 0:
                print(f"step {step + 1} loss {float(loss):.4f}")
    print(f"done: {args.steps} steps")


if __name__ == "__main__":
    main()
