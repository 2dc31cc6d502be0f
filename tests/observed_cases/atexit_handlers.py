"""A program whose atexit handler writes its last result and prints it (TensorFlow, logging
and many libraries finish their work there). Modelled on the atexit docs."""

import atexit

import keras
from _lab import regression, seed, show


def at_exit(model):
    weights = model.get_weights()[0].ravel()[:3]
    with open("at_exit.txt", "w") as f:
        f.write(" ".join(f"{w:.3f}" for w in weights) + "\n")
    print("atexit ran", flush=True)


seed()
x, y = regression()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, epochs=1, verbose=0)
atexit.register(at_exit, model)
show("trained", True)
