"""Data made by forked multiprocessing workers while TensorFlow is already imported (the
default start method on Linux before Python 3.14). Modelled on the multiprocessing docs and
keras.utils.PyDataset with workers."""

import multiprocessing as mp

import keras
import numpy as np
from _lab import seed, show


def batch(i):
    rng = np.random.default_rng(i)
    x = rng.normal(size=(16, 8)).astype("float32")
    return x, x.sum(axis=1, keepdims=True)


seed()
with mp.get_context("fork").Pool(2) as pool:
    batches = pool.map(batch, range(4))
x = np.concatenate([b[0] for b in batches])
y = np.concatenate([b[1] for b in batches])
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
history = model.fit(x, y, epochs=2, batch_size=16, verbose=0)
show("rows from workers", len(x))
show("loss per epoch", history.history["loss"])
