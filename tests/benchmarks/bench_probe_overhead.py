"""Overhead of the probe: time-to-ready through `tflaunch bench` vs a minimal script.

Both measure from the OS's process start to the end of the first inference on
sample:wide saved as .keras, in fresh processes, alternated so drift hits both alike.
Target: median ratio (tflaunch / minimal) at most 1.05.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.benchmarks.common import PRINT_PROCESS_AGE, alternated_pairs, report_ratio, save_sample

PAIRS = 7

# What a researcher would write by hand: the same import, load and first call.
MINIMAL = r"""
import os, sys, time
import tensorflow as tf
import keras
model = keras.models.load_model(sys.argv[1], compile=False)
fn = tf.function(lambda x: model(x, training=False))
x = tf.random.uniform((1,) + tuple(model.inputs[0].shape[1:]))
fn(x).numpy()
""" + PRINT_PROCESS_AGE


def tflaunch_ready(model: Path) -> float:
    done = subprocess.run([sys.executable, "-m", "tflaunch.gui.main", "bench", "--model", str(model),
                           "--steady", "0", "--json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["runs"][0]["time_to_ready"]


def minimal_ready(model: Path) -> float:
    done = subprocess.run([sys.executable, "-c", MINIMAL, str(model)], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        model = save_sample("wide", "keras", Path(tmp))
        pairs = alternated_pairs(lambda: tflaunch_ready(model), lambda: minimal_ready(model), PAIRS,
                                 "tflaunch vs minimal")
    report_ratio("probe_overhead", "time-to-ready, tflaunch bench vs minimal script, sample:wide .keras",
                 pairs, ("tflaunch_s", "minimal_s"), target=1.05)

if __name__ == "__main__":
    main()
