"""A GAN: a Model subclass with its own compile(d_optimizer, g_optimizer, loss_fn) and a
train_step that steps two optimizers. Modelled on keras.io/examples/generative/dcgan_overriding_train_step."""

import keras
import numpy as np
import tensorflow as tf
from _lab import seed, show

LATENT = 4


class GAN(keras.Model):
    def __init__(self, discriminator, generator):
        super().__init__()
        self.discriminator, self.generator = discriminator, generator
        self.seed_generator = keras.random.SeedGenerator(7)

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn
        self.d_loss_metric = keras.metrics.Mean(name="d_loss")
        self.g_loss_metric = keras.metrics.Mean(name="g_loss")

    @property
    def metrics(self):
        return [self.d_loss_metric, self.g_loss_metric]

    def train_step(self, real):
        n = tf.shape(real)[0]
        noise = keras.random.normal((n, LATENT), seed=self.seed_generator)
        fake = self.generator(noise)
        both = tf.concat([fake, real], axis=0)
        labels = tf.concat([tf.ones((n, 1)), tf.zeros((n, 1))], axis=0)
        with tf.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(both))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights, strict=True))
        noise = keras.random.normal((n, LATENT), seed=self.seed_generator)
        with tf.GradientTape() as tape:
            g_loss = self.loss_fn(tf.zeros((n, 1)), self.discriminator(self.generator(noise)))
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights, strict=True))
        self.d_loss_metric.update_state(d_loss)
        self.g_loss_metric.update_state(g_loss)
        return {"d_loss": self.d_loss_metric.result(), "g_loss": self.g_loss_metric.result()}


seed()
discriminator = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
                                  keras.layers.Dense(1, activation="sigmoid")], name="discriminator")
generator = keras.Sequential([keras.Input((LATENT,)), keras.layers.Dense(6)], name="generator")
gan = GAN(discriminator, generator)
gan.compile(keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy())
real = np.random.default_rng(5).normal(1.0, 0.2, size=(64, 6)).astype("float32")
history = gan.fit(real, epochs=2, batch_size=16, verbose=0)
show("d_loss", history.history["d_loss"])
show("g_loss", history.history["g_loss"])
show("optimizer steps", [int(o.iterations.numpy()) for o in (gan.d_optimizer, gan.g_optimizer)])
