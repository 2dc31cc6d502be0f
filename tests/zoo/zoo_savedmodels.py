"""Zoo entries that are SavedModels as other code makes them: Keras exports, a plain
tf.Module, several signatures without serving_default, and a TF1 graph."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
from zoo_entries import (
    Entry,
    check_outputs,
    export_quietly,
    first_line,
    floats,
    images,
    savedmodel_entry,
    serve,
    target,
)


def build_fcn(out: Path) -> dict[str, Entry]:
    image = keras.Input(shape=(None, None, 3), name="image")
    x = image
    # Every conv changes the depth to one the previous depth does not divide: on a too
    # small image oneDNN's CPU conv passes its input through instead of failing, and the
    # next layer then fails on the depth (equal depths would go through silently).
    for i, filters in enumerate((8, 16, 24, 32, 48)):
        x = keras.layers.Conv2D(filters, 3, strides=2, padding="valid", activation="relu", name=f"conv{i + 1}")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    model = keras.Model(image, keras.layers.Dense(5, name="logits")(x), name="fcn")
    path = target(out, "fcn")
    export_quietly(model, path)
    loaded = tf.saved_model.load(str(path))
    serve(loaded, "serving_default", image=images(64))
    errors = {}
    for size in (1, 32):
        try:
            serve(loaded, "serving_default", image=images(size))
            errors[f"image {size}x{size}"] = "no error"
        except AssertionError:
            errors[f"image {size}x{size}"] = "no error, non-finite outputs"
        except Exception as e:  # noqa: BLE001 - the message is what we record
            errors[f"image {size}x{size}"] = first_line(e)
    notes = "5 strided valid 3x3 convs, model.export: smallest image 63x63 (64 works); " + "; ".join(
        f"{k}: {v}" for k, v in errors.items()
    )
    return {"fcn": savedmodel_entry(path, loaded, model.count_params(), notes, errors=errors)}

def build_tf_module(out: Path) -> dict[str, Entry]:
    class Affine(tf.Module):
        def __init__(self) -> None:
            super().__init__(name="affine")
            self.w = tf.Variable(tf.random.normal([8, 4]), name="w")
            self.b = tf.Variable(tf.zeros([4]), name="b")

        @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32, name="x")])
        def __call__(self, x: tf.Tensor) -> tf.Tensor:
            return tf.nn.relu(x @ self.w + self.b)

    module = Affine()
    path = target(out, "tf_module")
    tf.saved_model.save(module, str(path), signatures={"serving_default": module.__call__})
    loaded = tf.saved_model.load(str(path))
    serve(loaded, "serving_default", x=floats(2, 8))
    check_outputs(loaded(tf.constant(floats(2, 8))))
    return {"tf_module": savedmodel_entry(path, loaded, 8 * 4 + 4, "plain tf.Module: w 8x4 + b 4, relu(x @ w + b)")}

def build_multi_signature(out: Path) -> dict[str, Entry]:
    class Codec(tf.Module):
        def __init__(self) -> None:
            super().__init__(name="codec")
            self.encoder = tf.Variable(tf.random.normal([4, 2]), name="encoder")
            self.table = tf.Variable(tf.random.normal([10, 4]), name="table")

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def encode(self, x: tf.Tensor) -> dict[str, tf.Tensor]:
            return {"code": x @ self.encoder}

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.int32, name="z")])
        def decode(self, z: tf.Tensor) -> dict[str, tf.Tensor]:
            return {"recon": tf.reduce_sum(tf.gather(self.table, z), axis=1)}

    module = Codec()
    path = target(out, "multi_signature")
    tf.saved_model.save(module, str(path), signatures={"encode": module.encode, "decode": module.decode})
    loaded = tf.saved_model.load(str(path))
    serve(loaded, "encode", x=floats(2, 4))
    serve(loaded, "decode", z=np.array([[1, 2], [3, 9]], dtype=np.int32))
    notes = "tf.Module, signatures encode(x float32 [None,4]) and decode(z int32 ids 0..9 [None,2]), no serving_default"
    entry = savedmodel_entry(path, loaded, 4 * 2 + 10 * 4, notes)
    entry["signature_inputs"]["decode"]["z"]["vocab"] = 10
    return {"multi_signature": entry}

def build_tf1_graph(out: Path) -> dict[str, Entry]:
    v1 = tf.compat.v1
    path = target(out, "tf1_graph")
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(0)
        x = v1.placeholder(tf.float32, [None, 8], name="x")
        w1 = v1.get_variable("w1", [8, 16], initializer=v1.glorot_uniform_initializer())
        b1 = v1.get_variable("b1", [16], initializer=v1.zeros_initializer())
        w2 = v1.get_variable("w2", [16, 3], initializer=v1.glorot_uniform_initializer())
        b2 = v1.get_variable("b2", [3], initializer=v1.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        y = tf.nn.softmax(tf.matmul(hidden, w2) + b2, name="y")
        with v1.Session(graph=graph) as session:
            session.run(v1.global_variables_initializer())
            builder = v1.saved_model.Builder(str(path))
            signature = v1.saved_model.predict_signature_def(inputs={"x": x}, outputs={"y": y})
            builder.add_meta_graph_and_variables(
                session, [v1.saved_model.tag_constants.SERVING], signature_def_map={"serving_default": signature}
            )
            builder.save()
    loaded = tf.saved_model.load(str(path))
    serve(loaded, "serving_default", x=floats(2, 8))
    notes = "TF1 graph (placeholder, get_variable, SavedModelBuilder): x [None,8] -> 16 relu -> 3 softmax"
    return {"tf1_graph": savedmodel_entry(path, loaded, 8 * 16 + 16 + 16 * 3 + 3, notes)}

def build_keras_export_dropout(out: Path) -> dict[str, Entry]:
    features = keras.Input(shape=(16,), name="features")
    x = keras.layers.Dense(32, activation="relu", name="dense")(features)
    x = keras.layers.BatchNormalization(name="norm")(x)
    x = keras.layers.Dropout(0.3, name="dropout")(x)
    model = keras.Model(features, keras.layers.Dense(4, name="logits")(x), name="keras_export_dropout")
    path = target(out, "keras_export_dropout")
    export_quietly(model, path)
    loaded = tf.saved_model.load(str(path))
    serve(loaded, "serving_default", features=floats(2, 16))
    extra = sorted(v.name for v in loaded.variables if "seed_generator" in v.name)
    notes = (
        f"Dense+BatchNorm+Dropout via model.export: loaded SavedModel has {len(loaded.variables)} variables "
        f"({len(loaded.trainable_variables)} trainable, {len(loaded.non_trainable_variables)} non-trainable incl. "
        f"{', '.join(extra)}) vs Keras {len(model.trainable_weights)}+{len(model.non_trainable_weights)} weights"
    )
    variables = {v.name: int(np.prod(v.shape)) for v in loaded.variables}
    return {
        "keras_export_dropout": savedmodel_entry(
            path, loaded, model.count_params(), notes, seed_variables=extra, variables=variables
        )
    }
