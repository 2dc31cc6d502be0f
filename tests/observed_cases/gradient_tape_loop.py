"""A training loop written from scratch: GradientTape in a tf.function, an optimizer,
a metric and a tf.data dataset. Modelled on keras.io/guides/writing_a_custom_training_loop_in_tensorflow."""

import keras
import tensorflow as tf
from _lab import classes, seed, show

seed()
x, y = classes()
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)])
optimizer = keras.optimizers.Adam(1e-2)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
accuracy = keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        logits = model(xb, training=True)
        loss = loss_fn(yb, logits)
    grads = tape.gradient(loss, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights, strict=True))
    accuracy.update_state(yb, logits)
    return loss


for epoch in range(3):
    for xb, yb in dataset:
        loss = train_step(xb, yb)
    show(f"epoch {epoch}", [float(loss), float(accuracy.result())])
    accuracy.reset_state()
show("optimizer steps", int(optimizer.iterations.numpy()))
