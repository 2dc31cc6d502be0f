"""fit() driving an overridden train_step with its own loss tracker.
Modelled on keras.io/guides/customizing_what_happens_in_fit (TensorFlow backend)."""

import keras
import tensorflow as tf
from _lab import regression, seed, show


class CustomModel(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = keras.ops.mean(keras.ops.square(self(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables, strict=True))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


seed()
x, y = regression()
model = CustomModel()
model.compile(optimizer=keras.optimizers.SGD(0.1))
history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
show("loss per epoch", history.history["loss"])
show("train_step is own", type(model).train_step is CustomModel.train_step)
