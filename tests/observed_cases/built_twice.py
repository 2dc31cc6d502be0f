"""A keras.Model built twice: build() called again, the same layers wired into a second
functional model, and a subclassed model called on a new batch size.
Modelled on keras.io/guides/functional_api ("shared layers") and keras.Model.build."""

import keras
import numpy as np
from _lab import seed, show

seed()
dense = keras.layers.Dense(2, name="shared")
a = keras.Input((3,))
model_a = keras.Model(a, dense(a), name="a")
b = keras.Input((3,))
model_b = keras.Model(b, dense(b), name="b")
x = np.ones((2, 3), "float32")
show("shared weights", model_a.predict(x, verbose=0).tolist() == model_b.predict(x, verbose=0).tolist())
seq = keras.Sequential([keras.layers.Dense(2)])
seq.build((None, 3))
seq.build((None, 3))
show("built", seq.built)
show("weights after two builds", len(seq.weights))
show("call", seq(x))
show("call on one row", seq(x[:1]))
show("layers of a", [layer.name for layer in model_a.layers])
