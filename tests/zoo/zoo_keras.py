"""Zoo entries saved by Keras: sequences with masking, a Transformer, dict inputs with
strings, custom and Lambda layers, mixed precision, multi-input in every format, a legacy
.h5 that cannot be read back, an image net of any size, and a model built by code."""

from __future__ import annotations

import warnings
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
from zoo_entries import (
    BUILDER,
    CITIES,
    ZOO_LAYERS,
    Entry,
    check_outputs,
    export_quietly,
    first_line,
    floats,
    images,
    import_path,
    keras_entry,
    load_keras,
    savedmodel_entry,
    serve,
    target,
    tokens,
)


def masked_lstm(vocab: int, width: int, name: str) -> keras.Model:
    """Embedding(mask_zero=True) -> LSTM -> Dense(2) on int32 tokens of any length."""
    tokens_in = keras.Input(shape=(None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(vocab, width, mask_zero=True, name="embedding")(tokens_in)
    x = keras.layers.LSTM(width, name="lstm")(x)
    return keras.Model(tokens_in, keras.layers.Dense(2, name="logits")(x), name=name)


def build_lstm_masked(out: Path) -> dict[str, Entry]:
    model = masked_lstm(1000, 16, "lstm_masked")
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

def build_h5_masking(out: Path) -> dict[str, Entry]:
    model = masked_lstm(500, 8, "h5_masking")
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
