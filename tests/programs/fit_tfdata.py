"""A typical Keras training script: compile(adam) and fit on a tf.data pipeline.

Stands for: the canonical "tutorial" program -- a small Sequential model trained with
model.fit on a tf.data.Dataset built with map, shuffle, batch and prefetch.

Phases tflaunch should observe: spawn, import, devices, build, compile, data,
first_step, steady.

Args: --steps N (default 30): total training steps (one epoch of N steps).
Writes `TRUTH first_step_end=<time.time()> main_cpu=<time.thread_time()>` to stderr when the
first batch has finished (the main thread's CPU time: what watching adds runs in it).
With TRUTH_EXIT=1 it ends as the second batch begins (os._exit: nothing after the first step
counted, bench_watching_instructions.py).
"""
import argparse
import os
import sys
import time

import keras
import numpy as np
import tensorflow as tf


class FirstStepTruth(keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        if batch == 1 and os.environ.get("TRUTH_EXIT") == "1":
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)

    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            sys.stderr.write(f"TRUTH first_step_end={time.time()!r} main_cpu={time.thread_time()!r}\n")
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
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")

    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 16)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    ds = (tf.data.Dataset.from_tensor_slices((x, y))
          .map(lambda a, b: (a * 2.0 - 1.0, b), num_parallel_calls=tf.data.AUTOTUNE)
          .shuffle(512, seed=0)
          .batch(32)
          .repeat()
          .prefetch(tf.data.AUTOTUNE))

    history = model.fit(ds, epochs=1, steps_per_epoch=args.steps, verbose=0,
                        callbacks=[FirstStepTruth()])
    print(f"trained {args.steps} steps, final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
