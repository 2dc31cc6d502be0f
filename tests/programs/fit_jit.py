"""Keras fit with XLA: model.compile(..., jit_compile=True), fit on numpy arrays.

Stands for: a training script that turns on XLA for speed; the first step pays for
tracing and XLA compilation of the whole train step.

Phases tflaunch should observe: spawn, import, devices, build, compile, data,
first_step (includes XLA compilation), steady.

Args: --steps N (default 30): total training steps (one epoch of N batches of 32).
Writes `TRUTH first_step_end=<time.time()>` to stderr when the first batch has finished.
"""
import argparse
import sys
import time

import keras
import numpy as np
import tensorflow as tf

BATCH = 32


class FirstStepTruth(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            sys.stderr.write(f"TRUTH first_step_end={time.time()!r}\n")
            sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    print("devices:", [d.name for d in tf.config.list_logical_devices()])
    inputs = keras.Input(shape=(16,))
    h = keras.layers.Dense(64, activation="relu")(inputs)
    h = keras.layers.Dense(64, activation="relu")(h)
    outputs = keras.layers.Dense(1)(h)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="mse", jit_compile=True)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.steps * BATCH, 16)).astype("float32")  # one epoch = --steps
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    history = model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0,
                        callbacks=[FirstStepTruth()])
    print(f"trained {args.steps} steps, final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
