"""A training script instrumented with tflaunch's mark API.

Stands for: a user's own program that labels its own start-up steps for tflaunch: a
`with mark("restore"):` span around restoring weights from a numpy file (~0.2 s), and a
bare `mark("warmup_done")` after the first training step. Run without tflaunch (no
tflaunch_mark on the path) the marks cost nothing and the script works the same.

Phases tflaunch should observe: spawn, import, devices, build, the "restore" span,
compile, data, first_step, the "warmup_done" mark, steady.

Args: --steps N (default 30): total training steps.
Writes `TRUTH first_step_end=<time.time()>` to stderr when the first batch has finished.
"""
import argparse
import os
import sys
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

try:
    from tflaunch_mark import mark
except ImportError:  # run without tflaunch: marks cost nothing
    def mark(name): import contextlib; return contextlib.nullcontext()  # noqa: E702, I001

BATCH = 32


class FirstStep(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            sys.stderr.write(f"TRUTH first_step_end={time.time()!r}\n")
            sys.stderr.flush()
            mark("warmup_done")


def restore_weights(model, folder):
    """Pretend restore: write a weights file, then read it back until ~0.2 s have passed."""
    path = os.path.join(folder, "dense0.npz")
    kernel, bias = model.layers[0].get_weights()
    np.savez(path, kernel=np.full_like(kernel, 0.01), bias=bias,
             padding=np.zeros(1_000_000, dtype="float32"))  # some bytes to read
    start = time.monotonic()
    while True:
        with np.load(path) as f:
            weights = [f["kernel"], f["bias"]]
            f["padding"].sum()
        if time.monotonic() - start >= 0.2:
            break
    model.layers[0].set_weights(weights)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    print("devices:", [d.name for d in tf.config.list_logical_devices()])
    model = keras.Sequential([
        keras.Input(shape=(16,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    with tempfile.TemporaryDirectory() as folder, mark("restore"):
        restore_weights(model, folder)
    model.compile(optimizer="adam", loss="mse")

    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.steps * BATCH, 16)).astype("float32")  # one epoch = --steps
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    history = model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[FirstStep()])
    print(f"trained {args.steps} steps, final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
