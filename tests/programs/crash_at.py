"""A normal Keras fit program that fails on purpose at a chosen phase.

Stands for: a training script that crashes -- before TensorFlow loads, while building
the model, at compile, in its input pipeline, inside the first step, or in the middle of
training -- so tflaunch can check it reports the failure in the right phase.

--at PHASE raises RuntimeError("crash_at PHASE") at that point:
  import      right before `import tensorflow`
  build       while building the model (after its first layer)
  compile     right after model.compile
  data        in the tf.data map function, as tf.data traces it while the input
              pipeline is built (before the first element is taken)
  first_step  in a callback's on_train_batch_begin for the first batch
  steady      in on_train_batch_end after 5 steps (the TRUTH line is written first)
--exit-early does sys.exit(3) right after `import tensorflow`.
With neither, it trains normally and exits 0.

Phases tflaunch should observe: spawn, import, devices, build, compile, data,
first_step, steady -- up to the chosen phase, which fails.

Args: --at PHASE, --exit-early, --steps N (default 30).
Writes `TRUTH first_step_end=<time.time()>` to stderr when the first batch has finished.
"""
import argparse
import sys
import time

PHASES = ("import", "build", "compile", "data", "first_step", "steady")
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--at", choices=PHASES)
parser.add_argument("--exit-early", action="store_true")
parser.add_argument("--steps", type=int, default=30)
args = parser.parse_args()


def crash(phase):
    if args.at == phase:
        raise RuntimeError(f"crash_at {phase}")


crash("import")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

if args.exit_early:
    print("exiting early, right after import tensorflow")
    sys.exit(3)
import keras  # noqa: E402

BATCH = 32


class Phases(keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        if batch == 0:
            crash("first_step")

    def on_train_batch_end(self, batch, logs=None):
        if batch == 0:
            sys.stderr.write(f"TRUTH first_step_end={time.time()!r}\n")
            sys.stderr.flush()
        if batch == 4:
            crash("steady")


def build_model():
    inputs = keras.Input(shape=(16,))
    h = keras.layers.Dense(64, activation="relu")(inputs)
    crash("build")
    outputs = keras.layers.Dense(1)(h)
    return keras.Model(inputs, outputs)


@tf.autograph.experimental.do_not_convert  # plain Python: errors are not rewrapped
def preprocess(x, y):
    # tf.data traces this into a graph when .map() is called: a Python error here
    # surfaces as the pipeline is built. (Not tf.py_function: an uncaught exception
    # while a py_function pipeline is live can hang Python's exit, see README.)
    crash("data")
    return x * 2.0 - 1.0, y


def main():
    print("devices:", [d.name for d in tf.config.list_logical_devices()])
    model = build_model()
    model.compile(optimizer="adam", loss="mse")
    crash("compile")

    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 16)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) * 0.1).astype("float32")
    ds = (tf.data.Dataset.from_tensor_slices((x, y)).map(preprocess)
          .batch(BATCH).repeat().prefetch(2))
    first_x, _ = next(iter(ds))  # look at one batch before training, as scripts do
    print("input batch shape:", tuple(first_x.shape))

    history = model.fit(ds, epochs=1, steps_per_epoch=args.steps, verbose=0,
                        callbacks=[Phases()])
    print(f"trained {args.steps} steps, final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
