"""A job resumed from a tf.train.CheckpointManager checkpoint, then trained: the restore is its load."""
import os

import tensorflow as tf
from _stack_lab import FirstStepTruth, mlp, regression, seed, show

seed()
x, y = regression()
if not os.path.isdir("ckpt"):  # the job before this one, as far as its checkpoint goes (no step here)
    first = mlp()
    tf.train.CheckpointManager(tf.train.Checkpoint(model=first), "ckpt", 2).save()
model = mlp()
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="mse")
manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), "ckpt", 2)
manager.checkpoint.restore(manager.latest_checkpoint).expect_partial()
show("restored from", os.path.basename(manager.latest_checkpoint))
history = model.fit(x, y, epochs=2, batch_size=32, verbose=0, callbacks=[FirstStepTruth()])
show("loss per epoch", history.history["loss"])
