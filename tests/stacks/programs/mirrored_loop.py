"""A MirroredStrategy custom loop on the CPU: strategy.run in a tf.function."""
import tensorflow as tf
from _stack_lab import mlp, regression, seed, show, truth

seed()
x, y = regression()
strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
with strategy.scope():
    model = mlp()
    optimizer = tf.keras.optimizers.SGD(0.05)
ds = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(32))


def replica_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def train_step(xb, yb):
    per_replica = strategy.run(replica_step, args=(xb, yb))
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica, axis=None)


losses = []
for epoch in range(2):
    for step, (xb, yb) in enumerate(ds):
        loss = train_step(xb, yb)
        if epoch == 0 and step == 0:
            truth("first_step_end")
    losses.append(float(loss))
show("replicas", strategy.num_replicas_in_sync)
show("loss per epoch", losses)
