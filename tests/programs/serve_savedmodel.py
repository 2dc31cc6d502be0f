"""A serving script: load an exported model and answer requests (no training).

Stands for: an inference server's start-up. By default it loads a SavedModel with
tf.saved_model.load and calls its `serving_default` signature; with --keras-load it
loads a .keras file with keras.models.load_model and calls the model directly. If the
model is missing from --dir, it is built and exported first (as a deploy step would).

Phases tflaunch should observe: spawn, import, devices, load, first (inference, which
includes tracing/restoring the function), steady. (On a first run into an empty folder,
a build + export happens before the load.)

Args: --dir DIR (required; may be empty), --steps N (default 30): number of inference
calls, --keras-load: use DIR/model.keras and keras.models.load_model instead.
Writes `TRUTH first_inference_end=<time.time()>` to stderr after the first call's
result has been read back with .numpy().
"""
import argparse
import os
import sys
import time

import keras
import numpy as np
import tensorflow as tf

BATCH = 8


def build_model():
    inputs = keras.Input(shape=(28, 28, 1), name="image")
    h = keras.layers.Conv2D(8, 3, activation="relu")(inputs)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Flatten()(h)
    outputs = keras.layers.Dense(10, activation="softmax", name="probs")(h)
    return keras.Model(inputs, outputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--keras-load", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    saved = os.path.join(args.dir, "saved")
    keras_file = os.path.join(args.dir, "model.keras")

    if args.keras_load:
        if not os.path.exists(keras_file):
            print("no", keras_file, "- building and saving one")
            build_model().save(keras_file)
        model = keras.models.load_model(keras_file)
        predict = lambda x: model(x, training=False)  # noqa: E731
    else:
        if not tf.saved_model.contains_saved_model(saved):
            print("no SavedModel in", saved, "- building and exporting one")
            build_model().export(saved, verbose=False)
        loaded = tf.saved_model.load(saved)
        serve = loaded.signatures["serving_default"]
        predict = lambda x: next(iter(serve(image=tf.constant(x)).values()))  # noqa: E731

    rng = np.random.default_rng(0)
    for i in range(args.steps):
        x = rng.random(size=(BATCH, 28, 28, 1), dtype=np.float32)
        probs = predict(x).numpy()
        if i == 0:
            sys.stderr.write(f"TRUTH first_inference_end={time.time()!r}\n")
            sys.stderr.flush()
        if (i + 1) % 10 == 0:
            print(f"request {i + 1}: top class {int(probs[0].argmax())}")
    print(f"served {args.steps} requests of batch {BATCH}")


if __name__ == "__main__":
    main()
