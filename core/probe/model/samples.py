"""The built-in sample models, built from code so nothing is downloaded."""

from __future__ import annotations

from typing import Any

from ..failure import ProbeFailure

SAMPLES: dict[str, str] = {
    "mlp": "Dense(1024) on 784 inputs, 0.8 M parameters",
    "wide": "8 × Dense(2048), 34 M parameters (about 130 MB)",
    "cnn": "MobileNetV2 architecture, random weights, 3.5 M parameters",
    "multi": "two named inputs (image and table), for signature handling",
}


def build_sample(keras: Any, name: str) -> Any:
    if name not in SAMPLES:
        choices = ", ".join(f"sample:{s}" for s in SAMPLES)
        raise ProbeFailure("unknown_sample", f"There is no built-in sample '{name}'. Choose one of: {choices}")
    keras.utils.set_random_seed(0)
    layers = keras.layers
    if name == "mlp":
        inputs = keras.Input((784,), name="pixels")
        x = layers.Dense(1024, activation="relu")(inputs)
        return keras.Model(inputs, layers.Dense(10, activation="softmax")(x), name="mlp")
    if name == "wide":
        inputs = x = keras.Input((2048,), name="features")
        for _ in range(8):
            x = layers.Dense(2048, activation="relu")(x)
        return keras.Model(inputs, x, name="wide")
    if name == "cnn":
        return keras.applications.MobileNetV2(weights=None, input_shape=(224, 224, 3))
    image = keras.Input((32, 32, 3), name="image")
    table = keras.Input((16,), name="table")
    x = layers.Flatten()(layers.Conv2D(8, 3, activation="relu")(image))
    y = layers.Dense(32, activation="relu")(table)
    out = layers.Dense(4)(layers.Concatenate()([x, y]))
    return keras.Model({"image": image, "table": table}, out, name="multi")
