"""Keras fit with compile(steps_per_execution=4): several steps per call into the graph.

Stands for: a training script tuned to cut Python overhead per step by running 4 train
steps inside one tf.function call (a common TPU/GPU setting). Keras calls the batch
callbacks once per execution, so the first "step" tflaunch sees ends after 4 batches.

Phases tflaunch should observe: spawn, import, devices, build, compile, data,
first_step (first execution of 4 batches, includes tracing), steady.

Args: --steps N (default 30): total training batches (one epoch of N batches of 32).
Writes `TRUTH first_step_end=<time.time()>` to stderr when the first execution has finished.
"""
import argparse
import sys
import time

import keras
import numpy as np
import tensorflow as tf

BATCH = 32


class FirstStepTruth(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = False

    def on_train_batch_end(self, batch, logs=None):
        if not self.seen:  # with steps_per_execution the first call has batch == 3
            self.seen = True
            sys.stderr.write(f"TRUTH first_step_end={time.time()!r}\n")
            sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    print("devices:", [d.name for d in tf.config.list_logical_devices()])
    model = keras.Sequential([
        keras.Input(shape=(16,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer="adam", loss="mse", steps_per_execution=4)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.steps * BATCH, 16)).astype("float32")  # one epoch = --steps
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    history = model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0,
                        callbacks=[FirstStepTruth()])
    print(f"trained {int(model.optimizer.iterations.numpy())} steps, "
          f"final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
