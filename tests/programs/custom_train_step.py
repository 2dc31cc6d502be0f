"""A subclassed keras.Model that overrides train_step (GradientTape inside), then fit.

Stands for: the Keras "customize what happens in fit()" pattern (GANs, custom losses):
fit drives the loop and callbacks, the model's own train_step computes gradients with
tf.GradientTape and applies them with its optimizer. fit traces it into a tf.function.

Phases tflaunch should observe: spawn, import, devices, build, compile, data,
first_step (includes tracing the custom train_step), steady.

Args: --steps N (default 30): total training steps (one epoch of N batches of 32).
Writes `TRUTH first_step_end=<time.time()>` to stderr when the first batch has finished.
"""
import argparse
import sys
import time

import keras
import numpy as np
import tensorflow as tf

BATCH = 32


class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(64, activation="relu")
        self.out = keras.layers.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, x, training=False):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(y - pred)) + 1e-4 * tf.add_n(
                [tf.nn.l2_loss(w) for w in self.trainable_weights])
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights, strict=True))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


class FirstStepTruth(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            sys.stderr.write(f"TRUTH first_step_end={time.time()!r}\n")
            sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    print("devices:", [d.name for d in tf.config.list_logical_devices()])
    model = Regressor()
    model(tf.zeros((1, 16)))  # build the layers
    model.compile(optimizer=keras.optimizers.Adam(1e-3))

    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.steps * BATCH, 16)).astype("float32")  # one epoch = --steps
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).prefetch(2)
    history = model.fit(ds, epochs=1, verbose=0, callbacks=[FirstStepTruth()])
    print(f"trained {int(model.optimizer.iterations.numpy())} steps, "
          f"final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
