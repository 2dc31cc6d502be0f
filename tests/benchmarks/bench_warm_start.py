"""Warm start against cold start, launch to ready, for the same script and profile.

The script a researcher would run: import TensorFlow and Keras, load a saved model
(sample:wide as .keras, about 120 MB of weights), call it once, print "ready". Both arms go
through the real command line, `tflaunch run --profile bench -- python script.py MODEL`
(cold) and the same with --warm, in fresh launches alternated; launch to ready is the wall
time from starting the command to the "ready" line on its stdout. The warm server is
started in the warm-up round (its start is reported apart: the first warm launch of a
session pays it once).
Target: median warm / cold at most 0.3.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.common import alternated_pairs, report, save_sample

PAIRS = 7
SCRIPT = """
import sys
import tensorflow as tf
import keras
model = keras.models.load_model(sys.argv[1], compile=False)
x = tf.random.uniform((1,) + tuple(model.inputs[0].shape[1:]))
model(x, training=False).numpy()
print("ready", flush=True)
"""


def launch_to_ready(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            text=True, env=env)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "ready":
            ready = time.perf_counter() - start
            break
    else:
        raise RuntimeError(f"{command} ended without 'ready' (exit {proc.wait()})")
    proc.wait()
    return ready


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="tflaunch-warm-bench-"))
    env = {**os.environ, "TFLAUNCH_DATA_DIR": str(folder / "data"), "TFLAUNCH_CONFIG_DIR": str(folder / "config"),
           "XDG_RUNTIME_DIR": str(folder / "run"), "TF_CPP_MIN_LOG_LEVEL": "2"}
    (folder / "run").mkdir()
    model = save_sample("wide", "keras", folder)
    script = folder / "script.py"
    script.write_text(SCRIPT)
    tflaunch = [sys.executable, "-m", "tflaunch.gui.main"]
    subprocess.run([*tflaunch, "bench", "--model", str(model), "--steady", "0", "--save-profile", "bench",
                    "--no-history"], env=env, check=True, capture_output=True)
    cold = [*tflaunch, "run", "--profile", "bench", "--", sys.executable, str(script), str(model)]
    warm = [*tflaunch, "run", "--warm", "--profile", "bench", "--", sys.executable, str(script), str(model)]
    first_warm = launch_to_ready(warm, env)  # starts the server
    pairs = alternated_pairs(lambda: launch_to_ready(warm, env), lambda: launch_to_ready(cold, env), PAIRS,
                             "warm vs cold")
    ratio = sorted(a / b for a, b in pairs)[len(pairs) // 2]
    report("warm_start", {
        "benchmark": "launch to ready of a script loading sample:wide (.keras) through tflaunch run --profile: "
                     "--warm / cold",
        "pairs_s": [{"warm": a, "cold": b} for a, b in pairs],
        "first_warm_launch_with_server_start_s": first_warm,
        "median_ratio": ratio, "target": 0.3, "met": ratio <= 0.3,
    })
    subprocess.run([*tflaunch, "warm", "stop"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
