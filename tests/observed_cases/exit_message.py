"""A script that ends with sys.exit("message") from inside a Keras callback (status 1, the
message on stderr). Modelled on keras.io/guides/writing_your_own_callbacks (early stop on a condition)."""

import sys

import keras
from _lab import regression, seed, show


class Abort(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        show("epoch", epoch)
        if epoch == 1:
            sys.exit(f"stopped by the script at epoch {epoch}")


seed()
x, y = regression()
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, epochs=5, verbose=0, callbacks=[Abort()])
print("never here")
