"""A mixed_float16 policy: float16 compute, float32 variables, a float32 output layer.
Modelled on tensorflow.org/guide/mixed_precision."""

import keras
from _lab import classes, seed, show

keras.mixed_precision.set_global_policy("mixed_float16")
seed()
x, y = classes()
inputs = keras.Input((8,))
h = keras.layers.Dense(16, activation="relu")(inputs)
outputs = keras.layers.Activation("softmax", dtype="float32")(keras.layers.Dense(3)(h))
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
show("compute dtype", model.layers[1].compute_dtype)
show("variable dtype", model.layers[1].variable_dtype)
show("optimizer", type(model.optimizer).__name__)
history = model.fit(x, y, epochs=2, batch_size=16, verbose=0)
show("loss per epoch", history.history["loss"], 2)
