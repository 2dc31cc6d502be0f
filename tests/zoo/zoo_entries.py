"""How a zoo entry is described (its manifest record) and checked, for every builder.

Runs only inside the zoo's build process (it imports TensorFlow).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
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
