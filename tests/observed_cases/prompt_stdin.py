"""A training script that asks for its epochs on stdin and falls back on EOF (run with no
input, as under a batch system). Modelled on the input() docs and keras.io's getting-started fit."""

import sys

import keras
from _lab import regression, seed, show

try:
    answer = input("How many epochs? ")
except EOFError:
    print()
    answer = ""
epochs = int(answer) if answer.strip() else 2
show("epochs", epochs)
show("rest of stdin", repr(sys.stdin.read()))
show("stdin is a tty", sys.stdin.isatty())
seed()
x, y = regression()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
show("loss per epoch", model.fit(x, y, epochs=epochs, verbose=0).history["loss"])
