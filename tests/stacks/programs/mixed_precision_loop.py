"""The mixed-precision guide's custom loop: a LossScaleOptimizer, scaled loss and gradients
(Keras 2: get_scaled_loss / get_unscaled_gradients; Keras 3: scale_loss, apply unscales)."""
import tensorflow as tf
from _stack_lab import regression, seed, show, truth

seed()
tf.keras.mixed_precision.set_global_policy("mixed_float16")
x, y = regression()
inputs = tf.keras.Input(shape=(8,))
hidden = tf.keras.layers.Dense(16, activation="relu")(inputs)
outputs = tf.keras.layers.Activation("linear", dtype="float32")(tf.keras.layers.Dense(1)(hidden))
model = tf.keras.Model(inputs, outputs)
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05))
keras2 = hasattr(optimizer, "get_scaled_loss")


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        scaled = optimizer.get_scaled_loss(loss) if keras2 else optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    if keras2:
        grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
losses = []
for epoch in range(3):
    for step, (xb, yb) in enumerate(ds):
        loss = train_step(xb, yb)
        if epoch == 0 and step == 0:
            truth("first_step_end")
    losses.append(float(loss))
show("compute dtype", model.layers[1].compute_dtype)
show("loss per epoch", losses)
