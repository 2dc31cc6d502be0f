"""A custom training loop run eagerly: tf.GradientTape, keras Adam, no tf.function.

Stands for: research-style code that iterates `for x, y in dataset` and applies
gradients by hand, every op dispatched eagerly (slow per step, no tracing).

Phases tflaunch should observe: spawn, import, devices, build, data, first_step, steady
(no separate compile: the optimizer builds its slots on the first apply_gradients).

Args: --steps N (default 30): total training steps.
Writes `TRUTH first_step_end=<time.time()>` to stderr right after the first
optimizer.apply_gradients (and loss.numpy()) returns.
"""
import argparse
import sys
import time

import keras
import numpy as np
import tensorflow as tf


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    model = keras.Sequential([
        keras.Input(shape=(16,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.MeanSquaredError()

    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 16)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512, seed=0).batch(32).repeat()

    step = 0
    for xb, yb in ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        loss_value = float(loss.numpy())
        if step == 0:
            sys.stderr.write(f"TRUTH first_step_end={time.time()!r}\n")
            sys.stderr.flush()
        step += 1
        if step % 10 == 0:
            print(f"step {step} loss {loss_value:.4f}")
        if step >= args.steps:
            break
    print(f"done: {step} steps")


if __name__ == "__main__":
    main()
