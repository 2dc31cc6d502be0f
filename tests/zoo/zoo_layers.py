"""A custom Keras layer for the zoo's `custom_layer` model: loading that model needs this
module imported first (it registers `zoo>ScaledDense`)."""

from __future__ import annotations

import keras


@keras.saving.register_keras_serializable(package="zoo")
class ScaledDense(keras.layers.Layer):
    """A dense layer whose output is multiplied by a fixed `scale` and a learnt per-unit gain."""

    def __init__(self, units: int, scale: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.scale = scale

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform", name="kernel")
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")
        self.gain = self.add_weight(shape=(self.units,), initializer="ones", name="gain")

    def call(self, inputs):
        return (keras.ops.matmul(inputs, self.kernel) + self.bias) * self.gain * self.scale

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.units)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "scale": self.scale}
