"""compile(adam) and fit on a tf.data pipeline: the tutorial program on any Keras."""
import tensorflow as tf
from _stack_lab import FirstStepTruth, mlp, regression, seed, show

seed()
x, y = regression()
ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a * 2.0, b)).batch(16).repeat()
model = mlp()
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="mse")
history = model.fit(ds, steps_per_epoch=30, epochs=2, verbose=0, callbacks=[FirstStepTruth()])
show("loss per epoch", history.history["loss"])
with open("history.txt", "w") as f:
    f.write(" ".join(f"{v:.3f}" for v in history.history["loss"]))
