"""What the stack programs share: seeding, data, rounded printing and the program's own clock.

Not a program. Everything here runs on every stack of tests/stacks (Python 3.8-3.13,
TensorFlow 2.13-2.21, Keras 2 or 3), so it uses `tf.keras` and what both Kerases have."""

import random
import sys
import time

import numpy as np
import tensorflow as tf


def seed():
    random.seed(0)
    np.random.seed(0)
    tf.random.set_seed(0)


def regression(n=256, features=8):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, features)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    return x, y


def mlp(features=8):
    return tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(features,)),
        tf.keras.layers.Dense(1),
    ])


def show(label, value):
    """A value printed rounded, so both runs of a differential test print the same text."""
    if isinstance(value, (list, tuple)):
        value = [round(float(v), 3) for v in value]
    elif isinstance(value, float):
        value = round(value, 3)
    print(f"{label}: {value}", flush=True)


def truth(key):
    """The program's own clock at a point tflaunch also reports (on stderr: never compared), and
    its main thread's CPU time until then (bench_program_overhead compares it, plain and watched)."""
    sys.stderr.write(f"TRUTH {key}={time.time()!r} main_cpu={time.thread_time()!r}\n")
    sys.stderr.flush()


class FirstStepTruth(tf.keras.callbacks.Callback):
    """fit's first batch has ended, by the program's clock."""

    def on_train_batch_end(self, batch, logs=None):
        if not getattr(self, "said", False):
            self.said = True
            truth("first_step_end")

