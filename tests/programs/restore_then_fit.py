"""Resume training: restore a tf.train.Checkpoint (model + optimizer), then fit.

Stands for: a training job restarted from its last checkpoint. On the first run in an
empty --dir it trains 2 steps and writes both a tf.train.Checkpoint and DIR/model.keras
(the "previous job"); every run then builds a fresh model, restores the checkpoint into
it and fits.

Phases tflaunch should observe: spawn, import, devices, build, load (checkpoint restore),
compile, data, first_step, steady. (On a first run into an empty folder, an extra
build/compile/short fit/save happens before the restore.)

Args: --dir DIR (required; may be empty), --steps N (default 30): training steps after
the restore. Writes `TRUTH first_step_end=<time.time()>` to stderr when the first batch
after the restore has finished.
"""
import argparse
import os
import sys
import time

import keras
import numpy as np
import tensorflow as tf

BATCH = 32


class FirstStepTruth(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            sys.stderr.write(f"TRUTH first_step_end={time.time()!r}\n")
            sys.stderr.flush()


def build_model():
    model = keras.Sequential([
        keras.Input(shape=(16,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    return model


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 16)).astype("float32")
    return x, (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    prefix = os.path.join(args.dir, "ckpt")

    if tf.train.latest_checkpoint(args.dir) is None:
        print("no checkpoint in", args.dir, "- training 2 steps and saving one")
        model = build_model()
        x, y = make_data(2 * BATCH, seed=1)
        model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
        tf.train.Checkpoint(model=model, optimizer=model.optimizer).save(prefix)
        model.save(os.path.join(args.dir, "model.keras"))

    model = build_model()
    model.optimizer.build(model.trainable_variables)  # create slots so they restore too
    path = tf.train.latest_checkpoint(args.dir)
    tf.train.Checkpoint(model=model, optimizer=model.optimizer).restore(path).expect_partial()
    print(f"restored {path} at optimizer step {int(model.optimizer.iterations.numpy())}")

    x, y = make_data(args.steps * BATCH, seed=2)
    history = model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0,
                        callbacks=[FirstStepTruth()])
    print(f"trained {args.steps} more steps, final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
