"""Build the model zoo: varied real architectures, built from code and saved to disk.

    python tests/zoo/build.py OUTDIR [NAME ...]

Builds every zoo model (or only the named ones; `multi_io` names its three entries),
saves each under OUTDIR, loads it back with plain TensorFlow/Keras, runs a forward pass on
sensible inputs, and writes OUTDIR/manifest.json:

    {NAME: {"path", "format": keras|h5|savedmodel|code, "imports": [.py paths to import
     before loading], "inputs": {name: {"shape", "dtype", ...}}, "signatures": [...],
     "params": int, "notes": str, ...}}

Input names are those a user feeds: dict keys for a dict-input Keras model (its tensor
names differ, see "tensor_names"), else the tensor or signature argument names. For a
SavedModel "inputs" are serving_default's (else the first signature by name), and
"signature_inputs" gives every signature's. Token inputs carry "vocab" (feed ids
1..vocab-1), string inputs "vocabulary". What is expected to fail (a load, a too small
image) is recorded, message included, under "errors". "params" counts weights a user
expects: no seed-generator state, no optimizer.

Runs in its own process: it imports TensorFlow, which the test process never does.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
ZOO_LAYERS = HERE / "zoo_layers.py"
BUILDER = HERE / "builder_model.py"
CITIES = ["paris", "tokyo", "lima", "oslo"]

Entry = dict[str, Any]


# ---------------------------------------------------------------------------- helpers


def import_path(path: Path) -> Any:
    """Import a .py file by path, as the tool does with a model's "imports"."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def summary(kind: str, message: str) -> str:
    """`Kind: the message's first informative line`, plus the nested cause Keras buries in
    a deserialization error ("Could not locate class 'X'")."""
    noise = ("Graph execution error", "Detected at node", "<stack traces", "[[", "\x1b")
    lines = [line.strip() for line in message.splitlines() if line.strip() and not line.strip().startswith(noise)]
    text = f"{kind}: {lines[0] if lines else ''}"
    cause = re.search(r"Could not locate class '[^']+'", message)
    return f"{text} ... {cause.group(0)}" if cause and cause.group(0) not in text else text


def first_line(error: BaseException) -> str:
    return summary(type(error).__name__, getattr(error, "message", None) or str(error))


def dims(shape: Any) -> list[int | None]:
    return [None if d is None else int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape)]


def dtype_name(dtype: Any) -> str:
    return tf.as_dtype(dtype).name


def keras_inputs(model: keras.Model) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """{name a user feeds: spec} and, for dict inputs, {dict key: tensor name}."""
    struct = model._inputs_struct
    if isinstance(struct, dict):
        pairs = list(struct.items())
    else:
        tensors = struct if isinstance(struct, list | tuple) else [struct]
        pairs = [(t.name, t) for t in tensors]
    inputs = {key: {"shape": dims(t.shape), "dtype": dtype_name(t.dtype)} for key, t in pairs}
    tensor_names = {key: t.name for key, t in pairs} if isinstance(struct, dict) else {}
    return inputs, tensor_names


def signature_inputs(loaded: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """{signature: {argument name: spec}} of a loaded SavedModel."""
    result = {}
    for name, fn in loaded.signatures.items():
        _, kwargs = fn.structured_input_signature
        result[name] = {k: {"shape": dims(s.shape), "dtype": s.dtype.name} for k, s in sorted(kwargs.items())}
    return result


def savedmodel_entry(path: Path, loaded: Any, params: int, notes: str, **extra: Any) -> Entry:
    per_signature = signature_inputs(loaded)
    signatures = sorted(per_signature)
    default = "serving_default" if "serving_default" in per_signature else signatures[0]
    return {
        "path": str(path),
        "format": "savedmodel",
        "imports": [],
        "inputs": per_signature[default],
        "signatures": signatures,
        "signature_inputs": per_signature,
        "params": params,
        "notes": notes,
        **extra,
    }


def keras_entry(path: Path | str, fmt: str, model: keras.Model, notes: str, **extra: Any) -> Entry:
    """An entry described from the loaded (or built) Keras model."""
    inputs, tensor_names = keras_inputs(model)
    entry: Entry = {
        "path": str(path),
        "format": fmt,
        "imports": [],
        "inputs": inputs,
        "signatures": [],
        "params": int(model.count_params()),
        "notes": notes,
    }
    if tensor_names:
        entry["tensor_names"] = tensor_names
    entry.update(extra)
    return entry


def tokens(vocab: int, batch: int = 2, length: int = 16) -> np.ndarray:
    return np.random.default_rng(0).integers(1, vocab, size=(batch, length), dtype=np.int32)


def images(size: int = 64, batch: int = 2) -> np.ndarray:
    return np.random.default_rng(0).uniform(0, 255, size=(batch, size, size, 3)).astype("float32")


def floats(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).normal(size=shape).astype("float32")


def target(out: Path, name: str) -> Path:
    """OUTDIR/name, with what an earlier build left there removed (SavedModelBuilder
    refuses a non-empty folder)."""
    path = out / name
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    return path


def load_keras(path: Path, **kwargs: Any) -> keras.Model:
    return keras.models.load_model(path, compile=False, **kwargs)


def check_outputs(outputs: Any) -> None:
    """Every output is finite: the forward pass really ran."""
    for value in tf.nest.flatten(outputs):
        array = np.asarray(value, dtype="float32")
        assert array.size and np.isfinite(array).all(), array


def serve(loaded: Any, signature: str, **feed: Any) -> Any:
    fn = loaded.signatures[signature]
    _, kwargs = fn.structured_input_signature
    outputs = fn(**{k: tf.constant(v, dtype=kwargs[k].dtype) for k, v in feed.items()})
    check_outputs(outputs)
    return outputs


def export_quietly(model: keras.Model, path: Path) -> None:
    """model.export prints its endpoints; keep the build's output to the timings."""
    model.export(str(path), verbose=False)


# ---------------------------------------------------------------------------- the zoo


def build_lstm_masked(out: Path) -> dict[str, Entry]:
    tokens_in = keras.Input(shape=(None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(1000, 16, mask_zero=True, name="embedding")(tokens_in)
    x = keras.layers.LSTM(16, name="lstm")(x)
    model = keras.Model(tokens_in, keras.layers.Dense(2, name="logits")(x), name="lstm_masked")
    path = target(out, "lstm_masked.keras")
    model.save(path)
    loaded = load_keras(path)
    check_outputs(loaded(tokens(1000)))
    padded = tokens(1000)
    padded[:, 10:] = 0  # the mask at work: trailing padding
    check_outputs(loaded(padded))
    entry = keras_entry(path, "keras", loaded, "Embedding(1000,16,mask_zero=True) -> LSTM(16) -> Dense(2)")
    entry["inputs"]["tokens"]["vocab"] = 1000
    return {"lstm_masked": entry}


def build_transformer(out: Path) -> dict[str, Entry]:
    tokens_in = keras.Input(shape=(None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(2000, 32, name="embedding")(tokens_in)
    attention = keras.layers.MultiHeadAttention(num_heads=2, key_dim=16, name="attention")(x, x)
    x = keras.layers.LayerNormalization(name="norm1")(keras.layers.Add()([x, attention]))
    ffn = keras.layers.Dense(64, activation="relu", name="ffn1")(x)
    ffn = keras.layers.Dense(32, name="ffn2")(ffn)
    x = keras.layers.LayerNormalization(name="norm2")(keras.layers.Add()([x, ffn]))
    x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    model = keras.Model(tokens_in, keras.layers.Dense(3, name="logits")(x), name="transformer")
    path = target(out, "transformer.keras")
    model.save(path)
    loaded = load_keras(path)
    check_outputs(loaded(tokens(2000)))
    entry = keras_entry(path, "keras", loaded, "Embedding(2000,32) + one MultiHeadAttention encoder block -> Dense(3)")
    entry["inputs"]["tokens"]["vocab"] = 2000
    return {"transformer": entry}


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


def build_dict_strings(out: Path) -> dict[str, Entry]:
    city = keras.Input(shape=(1,), dtype="string", name="city_in")
    age = keras.Input(shape=(1,), dtype="float32", name="age_in")
    lookup = keras.layers.StringLookup(vocabulary=CITIES, name="city_lookup")
    x = keras.layers.Embedding(lookup.vocabulary_size(), 4, name="city_embedding")(lookup(city))
    x = keras.layers.Concatenate(name="concat")([keras.layers.Flatten(name="flatten")(x), age])
    x = keras.layers.Dense(8, activation="relu", name="hidden")(x)
    with warnings.catch_warnings():  # keys differ from tensor names on purpose
        warnings.simplefilter("ignore", UserWarning)
        model = keras.Model({"city": city, "age": age}, keras.layers.Dense(1, name="score")(x), name="dict_strings")
    path = target(out, "dict_strings.keras")
    model.save(path)
    with warnings.catch_warnings():  # the same warning again, on rebuilding the model
        warnings.simplefilter("ignore", UserWarning)
        loaded = load_keras(path)
    feed = {"city": np.array([["paris"], ["lima"]]), "age": floats(2, 1)}
    check_outputs(loaded(feed))
    try:
        loaded({"city_in": feed["city"], "age_in": feed["age"]})
        by_name = "feeding by tensor name ran (no error)"
    except Exception as e:  # noqa: BLE001
        by_name = first_line(e)
    entry = keras_entry(
        path,
        "keras",
        loaded,
        "dict inputs {city: string (StringLookup over 4 cities + Embedding), age: float32}; "
        "tensor names city_in/age_in differ from the keys; model.inputs is ordered by key (age_in, city_in)",
        errors={"fed by tensor name": by_name},
    )
    entry["inputs"]["city"]["vocabulary"] = CITIES
    return {"dict_strings": entry}


def build_custom_layer(out: Path) -> dict[str, Entry]:
    zoo_layers = import_path(ZOO_LAYERS)
    features = keras.Input(shape=(6,), name="features")
    x = zoo_layers.ScaledDense(4, scale=0.5, name="scaled_dense")(features)
    model = keras.Model(features, keras.layers.Dense(1, name="out")(x), name="custom_layer")
    path = target(out, "custom_layer.keras")
    model.save(path)
    loaded = load_keras(path)
    check_outputs(loaded(floats(2, 6)))
    entry = keras_entry(path, "keras", loaded, "uses zoo>ScaledDense from zoo_layers.py")
    entry["imports"] = [str(ZOO_LAYERS)]
    return {"custom_layer": entry}


def build_lambda_layer(out: Path) -> dict[str, Entry]:
    features = keras.Input(shape=(4,), name="features")
    x = keras.layers.Dense(4, name="dense")(features)
    x = keras.layers.Lambda(lambda t: t * 2.0, name="double")(x)
    model = keras.Model(features, keras.layers.Dense(1, name="out")(x), name="lambda_layer")
    path = target(out, "lambda_layer.keras")
    model.save(path)
    loaded = load_keras(path, safe_mode=False)
    check_outputs(loaded(floats(2, 4)))
    return {"lambda_layer": keras_entry(path, "keras", loaded, "a Lambda layer (x * 2): loading needs safe_mode=False")}


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


def build_mixed_precision(out: Path) -> dict[str, Entry]:
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        features = keras.Input(shape=(64,), name="features")
        x = keras.layers.Dense(128, activation="relu", name="dense1")(features)
        x = keras.layers.Dense(64, activation="relu", name="dense2")(x)
        outputs = keras.layers.Dense(10, dtype="float32", name="logits")(x)
        model = keras.Model(features, outputs, name="mixed_precision")
    finally:
        keras.mixed_precision.set_global_policy("float32")
    path = target(out, "mixed_precision.keras")
    model.save(path)
    loaded = load_keras(path)
    result = loaded(floats(2, 64))
    check_outputs(result)
    assert result.dtype == "float32" and loaded.get_layer("dense1").compute_dtype == "float16"
    notes = "mixed_float16 Dense net (float16 compute, float32 variables), float32 last Dense; runs on CPU"
    return {"mixed_precision": keras_entry(path, "keras", loaded, notes)}


def build_multi_io(out: Path) -> dict[str, Entry]:
    a = keras.Input(shape=(10,), name="a")
    b = keras.Input(shape=(5,), name="b")
    x = keras.layers.Concatenate(name="concat")([keras.layers.Dense(8, name="dense_a")(a), b])
    x = keras.layers.Dense(16, activation="relu", name="hidden")(x)
    score = keras.layers.Dense(1, name="score")(x)
    classes = keras.layers.Dense(3, activation="softmax", name="classes")(x)
    model = keras.Model([a, b], [score, classes], name="multi_io")
    feed = [floats(2, 10), floats(2, 5)]
    entries = {}
    notes = "list inputs [a (None,10), b (None,5)], two outputs [score (None,1), classes (None,3)]"
    for fmt, suffix in (("keras", ".keras"), ("h5", ".h5")):
        path = target(out, f"multi_io{suffix}")
        model.save(path)
        loaded = load_keras(path)
        check_outputs(loaded(feed))
        entries[f"multi_io_{fmt}"] = keras_entry(path, fmt, loaded, notes)
    path = target(out, "multi_io_savedmodel")
    export_quietly(model, path)
    loaded = tf.saved_model.load(str(path))
    serve(loaded, "serving_default", a=feed[0], b=feed[1])
    check_outputs(loaded.serve(feed))
    entries["multi_io_savedmodel"] = savedmodel_entry(path, loaded, model.count_params(), notes + "; model.export")
    return entries


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


def build_h5_masking(out: Path) -> dict[str, Entry]:
    tokens_in = keras.Input(shape=(None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(500, 8, mask_zero=True, name="embedding")(tokens_in)
    x = keras.layers.LSTM(8, name="lstm")(x)
    model = keras.Model(tokens_in, keras.layers.Dense(2, name="logits")(x), name="h5_masking")
    path = target(out, "h5_masking.h5")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.save(path)  # "legacy HDF5" warning on stderr otherwise (absl)
    errors = {}
    try:
        loaded = load_keras(path)
        check_outputs(loaded(tokens(500)))
        notes = "Keras-3-saved legacy .h5 with Embedding(mask_zero=True)+LSTM: it LOADS in this Keras"
    except Exception as e:  # noqa: BLE001
        errors["load_model"] = first_line(e)
        notes = "Keras-3-saved legacy .h5 with Embedding(mask_zero=True)+LSTM fails to load: " + errors["load_model"]
    entry = keras_entry(path, "h5", model, notes, errors=errors)
    entry["inputs"]["tokens"]["vocab"] = 500
    return {"h5_masking": entry}


def build_images_unknown(out: Path) -> dict[str, Entry]:
    model = keras.applications.MobileNetV3Small(
        input_shape=(None, None, 3), alpha=0.5, minimalistic=True, weights=None, include_top=True, classes=10
    )
    path = target(out, "images_unknown.keras")
    model.save(path)
    loaded = load_keras(path)
    check_outputs(loaded(images(64)))
    notes = "keras.applications.MobileNetV3Small(alpha=0.5, minimalistic, 10 classes), any image size, pixels 0..255"
    return {"images_unknown": keras_entry(path, "keras", loaded, notes)}


def build_code_builder(out: Path) -> dict[str, Entry]:
    model = import_path(BUILDER).build_model()
    check_outputs(model(floats(2, 32, 32, 3)))
    notes = "not saved: built by calling build_model() from builder_model.py"
    return {"code_builder": keras_entry(f"{BUILDER}:build_model", "code", model, notes)}


BUILDERS: dict[str, Callable[[Path], dict[str, Entry]]] = {
    "lstm_masked": build_lstm_masked,
    "transformer": build_transformer,
    "fcn": build_fcn,
    "dict_strings": build_dict_strings,
    "custom_layer": build_custom_layer,
    "lambda_layer": build_lambda_layer,
    "tf_module": build_tf_module,
    "multi_signature": build_multi_signature,
    "tf1_graph": build_tf1_graph,
    "mixed_precision": build_mixed_precision,
    "multi_io": build_multi_io,
    "keras_export_dropout": build_keras_export_dropout,
    "h5_masking": build_h5_masking,
    "images_unknown": build_images_unknown,
    "code_builder": build_code_builder,
}
GROUPS = {"multi_io_keras": "multi_io", "multi_io_h5": "multi_io", "multi_io_savedmodel": "multi_io"}

# Loading these in a fresh process: what fails, and that the documented remedy works.
FRESH_CHECK = r"""
import importlib.util, json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
result = {}
def first_line(e):
    return [type(e).__name__, str(e)]
def attempt(key, fn):
    try:
        fn(); result[key] = None
    except Exception as e:
        result[key] = first_line(e)
custom, zoo_layers, lam = sys.argv[1:4]
if custom:
    attempt("custom_without_imports", lambda: keras.models.load_model(custom, compile=False))
    spec = importlib.util.spec_from_file_location("zoo_layers", zoo_layers)
    module = importlib.util.module_from_spec(spec); sys.modules["zoo_layers"] = module; spec.loader.exec_module(module)
    attempt("custom_with_imports", lambda: keras.models.load_model(custom, compile=False))
if lam:
    attempt("lambda_safe_mode", lambda: keras.models.load_model(lam, compile=False))
    attempt("lambda_unsafe", lambda: keras.models.load_model(lam, compile=False, safe_mode=False))
print("RESULT" + json.dumps(result))
"""


def check_in_fresh_process(manifest: dict[str, Entry]) -> None:
    """custom_layer must fail without its import and load with it; lambda_layer must fail
    in safe mode and load with safe_mode=False. Records the messages; raises otherwise."""
    custom = manifest.get("custom_layer", {}).get("path", "")
    lam = manifest.get("lambda_layer", {}).get("path", "")
    if not custom and not lam:
        return
    proc = subprocess.run(
        [sys.executable, "-c", FRESH_CHECK, custom, str(ZOO_LAYERS), lam], capture_output=True, text=True, timeout=300
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT")]
    if proc.returncode or not lines:
        raise RuntimeError(f"fresh-process check failed:\n{proc.stdout}\n{proc.stderr}")
    result = {k: v and summary(*v) for k, v in json.loads(lines[-1][len("RESULT") :]).items()}
    if custom:
        without, with_ = result["custom_without_imports"], result["custom_with_imports"]
        assert without and with_ is None, result
        entry = manifest["custom_layer"]
        entry["errors"] = {"load without imports": without}
        entry["notes"] += f"; without importing zoo_layers.py first: {without}"
    if lam:
        safe, unsafe = result["lambda_safe_mode"], result["lambda_unsafe"]
        assert safe and unsafe is None, result
        entry = manifest["lambda_layer"]
        entry["errors"] = {"load with safe_mode=True": safe}
        entry["notes"] += f"; default load: {safe}"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    out = Path(argv[0]).resolve()
    wanted = argv[1:] or list(BUILDERS)
    unknown = [n for n in wanted if n not in BUILDERS and n not in GROUPS]
    if unknown:
        print(f"unknown zoo names: {', '.join(unknown)}; known: {', '.join([*BUILDERS, *GROUPS])}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    groups = list(dict.fromkeys(GROUPS.get(n, n) for n in wanted))
    manifest: dict[str, Entry] = {}
    start = time.perf_counter()
    for group in groups:
        keras.backend.clear_session()  # the same layer names and weights whatever is built
        keras.utils.set_random_seed(0)
        began = time.perf_counter()
        entries = BUILDERS[group](out)
        if group in wanted:
            manifest.update(entries)
        else:
            manifest.update({k: v for k, v in entries.items() if k in wanted})
        print(f"{group:22s} {time.perf_counter() - began:6.2f} s", flush=True)
    began = time.perf_counter()
    check_in_fresh_process(manifest)
    print(f"{'fresh-process checks':22s} {time.perf_counter() - began:6.2f} s")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"built {len(manifest)} zoo entries in {time.perf_counter() - start:.1f} s -> {out / 'manifest.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
