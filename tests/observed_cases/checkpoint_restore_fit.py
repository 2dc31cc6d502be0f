"""A training job resumed from a tf.train.Checkpoint (model and optimizer), then trained on.
Modelled on tensorflow.org/guide/checkpoint (CheckpointManager, restore, train on)."""

import keras
import tensorflow as tf
from _lab import regression, seed, show


def make():
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


seed()
x, y = regression()
first = make()
first.fit(x, y, epochs=2, batch_size=16, verbose=0)
manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=first, optimizer=first.optimizer), "ckpts", 2)
show("saved", manager.save().replace("\\", "/"))

second = make()
second.optimizer.build(second.trainable_variables)
tf.train.Checkpoint(model=second, optimizer=second.optimizer).restore(manager.latest_checkpoint).expect_partial()
show("iterations restored", int(second.optimizer.iterations.numpy()))
show("loss after restore", second.evaluate(x, y, verbose=0))
history = second.fit(x, y, epochs=2, batch_size=16, verbose=0)
show("loss per epoch", history.history["loss"])
