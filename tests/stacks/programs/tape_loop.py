"""A training loop from scratch: a GradientTape in a tf.function, apply_gradients, a dataset."""
import tensorflow as tf
from _stack_lab import mlp, regression, seed, show, truth

seed()
x, y = regression()
model = mlp()
optimizer = tf.keras.optimizers.Adam(1e-2)
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


losses = []
for epoch in range(3):
    for step, (xb, yb) in enumerate(ds):
        loss = train_step(xb, yb)
        if epoch == 0 and step == 0:
            truth("first_step_end")
    losses.append(float(loss))
show("loss per epoch", losses)
show("optimizer steps", int(optimizer.iterations.numpy()))
