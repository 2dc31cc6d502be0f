"""A functional model built around nested Sequentials, as keras-io's examples build them:
a `data_augmentation` Sequential applied to the `Input`, and a transformer-style block whose
`ffn` is a Sequential called inside a custom layer. Construction calls both on symbolic
tensors; then the program sleeps (its own work between build and use) and makes real
inferences.

Stands for: image classification from scratch and the text-classification transformer of
keras.io. Phases tflaunch should observe: spawn, import, build (ending when the last layer
was made, not at the first call), devices, first (the first eager call on real data), steady.
Args: --steps N inference calls (default 30), --sleep S seconds between build and the calls.
Writes `TRUTH build_end=<time.time()>` right after the model is built and
`TRUTH first_inference_end=<time.time()>` after the first call's result is read back.
"""
import argparse
import sys
import time

import keras
import numpy as np


class Block(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.ffn = keras.Sequential([keras.layers.Dense(units * 2, activation="relu"), keras.layers.Dense(units)])
        self.norm = keras.layers.LayerNormalization()

    def call(self, x):
        return self.norm(x + self.ffn(x))


def build():
    augment = keras.Sequential([keras.layers.RandomFlip("horizontal"), keras.layers.RandomRotation(0.1)])
    inputs = keras.Input(shape=(16, 16, 3))
    x = augment(inputs)
    x = keras.layers.Conv2D(8, 3, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = Block(8)(keras.layers.Dense(8)(x))
    outputs = keras.layers.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--sleep", type=float, default=0.5)
    args = parser.parse_args()
    model = build()
    print(f"TRUTH build_end={time.time()!r}", file=sys.stderr, flush=True)
    time.sleep(args.sleep)
    x = np.random.default_rng(0).random((4, 16, 16, 3), dtype=np.float32)
    for i in range(args.steps):
        y = np.asarray(model(x, training=False))
        if i == 0:
            print(f"TRUTH first_inference_end={time.time()!r}", file=sys.stderr, flush=True)
    print("classes", y.shape)


if __name__ == "__main__":
    main()
