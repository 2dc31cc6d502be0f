"""A training script that reports failure through its exit status: sys.exit(3) when the loss
is above a threshold, and a message exit from a helper. Modelled on the sys.exit docs."""

import sys

import keras
from _lab import regression, seed, show

seed()
x, y = regression()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
loss = model.fit(x, y, epochs=1, verbose=0).history["loss"][-1]
show("loss", loss)
with open("status.txt", "w") as f:
    f.write("above threshold\n" if loss > 1e-6 else "converged\n")
sys.exit(3 if loss > 1e-6 else 0)
