"""fit driving an overridden train_step with a GradientTape and apply_gradients (both Kerases)."""
import tensorflow as tf
from _stack_lab import FirstStepTruth, regression, seed, show


class CustomModel(tf.keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = tf.keras.layers.Dense(16, activation="relu")
        self.out = tf.keras.layers.Dense(1)
        self.tracker = tf.keras.metrics.Mean(name="loss")

    def call(self, x, training=False):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.tracker.update_state(loss)
        return {"loss": self.tracker.result()}

    @property
    def metrics(self):
        return [self.tracker]


seed()
x, y = regression()
model = CustomModel()
model.compile(optimizer=tf.keras.optimizers.SGD(0.05))
history = model.fit(x, y, epochs=3, batch_size=16, verbose=0, callbacks=[FirstStepTruth()])
show("loss per epoch", history.history["loss"])
show("train_step is own", type(model).train_step is CustomModel.train_step)
