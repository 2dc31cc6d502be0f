"""MirroredStrategy on the one CPU: train, checkpoint, then a second run restored from the
checkpoint trains on. Modelled on tensorflow.org/tutorials/distribute/keras."""

import keras
import tensorflow as tf
from _lab import classes, seed, show

seed()
strategy = tf.distribute.MirroredStrategy()
show("replicas", strategy.num_replicas_in_sync)
x, y = classes()


def make():
    with strategy.scope():
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
        model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    return model


model = make()
model.fit(x, y, epochs=2, batch_size=16, verbose=0,
          callbacks=[keras.callbacks.ModelCheckpoint("mirrored.weights.h5", save_weights_only=True)])
model.save("mirrored.keras")
with strategy.scope():
    again = keras.models.load_model("mirrored.keras")
history = again.fit(x, y, epochs=2, batch_size=16, verbose=0)
show("second run loss", history.history["loss"])
