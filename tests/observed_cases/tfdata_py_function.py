"""A tf.data pipeline with a Python step inside (tf.py_function) feeding fit.
Modelled on tensorflow.org/guide/data ("Applying arbitrary Python logic")."""

import keras
import numpy as np
import tensorflow as tf
from _lab import regression, seed, show

seed()
x, y = regression()
seen = []


def noisy(features, target):
    seen.append(1)
    return features * 1.0, target + 0.0


def py_map(features, target):
    f, t = tf.py_function(noisy, [features, target], [tf.float32, tf.float32])
    f.set_shape([8])
    t.set_shape([1])
    return f, t


dataset = tf.data.Dataset.from_tensor_slices((x, y)).map(py_map).batch(16)
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
history = model.fit(dataset, epochs=2, verbose=0)
show("loss per epoch", history.history["loss"])
show("python calls", len(seen))
show("first batch", np.round(next(iter(dataset))[1].numpy()[:2, 0], 3))
