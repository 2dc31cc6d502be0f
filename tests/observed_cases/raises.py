"""A program that fails: a model called on input of the wrong shape (a Keras ValueError).
Its traceback is compared. Modelled on keras.io's Sequential guide ("specifying the input shape")."""

import keras
from _lab import seed

seed()
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
print("built", flush=True)


def serve(batch):
    return model.predict(batch, verbose=0)


serve(keras.ops.ones((2, 5)))
