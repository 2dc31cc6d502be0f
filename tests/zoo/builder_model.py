"""A model built from code, for `--model tests/zoo/builder_model.py:build_model`."""

from __future__ import annotations

import keras


def build_model() -> keras.Model:
    """A tiny conv net on 32×32 RGB images, 10 classes (1,562 parameters)."""
    inputs = keras.Input(shape=(32, 32, 3), name="image")
    x = keras.layers.Conv2D(8, 3, strides=2, activation="relu", name="conv1")(inputs)
    x = keras.layers.Conv2D(16, 3, strides=2, activation="relu", name="conv2")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    outputs = keras.layers.Dense(10, name="logits")(x)
    return keras.Model(inputs, outputs, name="builder_cnn")
