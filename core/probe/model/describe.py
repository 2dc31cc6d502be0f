"""What was measured of a model: the model it loaded, its variables and parameters (the
environment the run had is ../environment.py's, shared with the observer)."""

from __future__ import annotations

import os
from typing import Any, Dict, List

from .entry_point import EntryPoint
from .input_values import Fed
from .model_files import model_format


def model_variables(tf: Any, model: Any) -> List[Any]:
    """The unique variables of a loaded model, whatever built it (Keras, tf.Module, TF1)."""
    found: List[Any] = []
    seen = set()

    def add(variables: Any, keras: bool = False) -> None:
        for v in variables or []:
            # Keras 3 variables are not tf.Variables, but have the same name, shape and dtype.
            if (keras or isinstance(v, tf.Variable)) and id(v) not in seen:
                seen.add(id(v))
                found.append(v)

    if hasattr(model, "weights"):  # Keras: its weights, which leave out RNG seed state
        add(model.weights, keras=True)
        return found
    for attribute in ("trainable_variables", "non_trainable_variables", "variables"):
        add(getattr(model, attribute, None))
    if not found:  # a plain tf.Module or a TF1 SavedModel: walk what the object tracks
        try:
            add(tf.train.TrackableView(model).descendants())
        except Exception:  # an object tf.train cannot walk; count what the signatures use
            pass
    for function in dict(getattr(model, "signatures", {}) or {}).values():
        add(getattr(function, "variables", None))
    return found


def parameter_count(tf: Any, model: Any, variables: List[Any]) -> int:
    """Trainable and non-trainable weights: floating variables only, so a random seed's
    state, step counters and lookup-table bookkeeping are not counted as parameters."""
    if hasattr(model, "count_params"):
        try:
            return int(model.count_params())
        except ValueError:  # an unbuilt Keras model; fall back to its variables
            pass
    return int(sum(v.shape.num_elements() or 0 for v in variables if v.dtype.is_floating or v.dtype.is_complex))


def describe(tf: Any, model: Any, spec: str, entry: EntryPoint, fed: List[Fed], variables: List[Any],
             config: Dict[str, Any]) -> Dict[str, Any]:
    fmt, size = "sample", None
    if not spec.startswith("sample:"):
        fmt = model_format(spec) or "unknown"
        if fmt != "code":
            path = os.path.abspath(os.path.expanduser(spec))
            files = os.walk(path) if os.path.isdir(path) else [(os.path.dirname(path), [], [os.path.basename(path)])]
            size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in files for f in fs)
    return {"name": getattr(model, "name", None) or os.path.basename(spec.rstrip("/")), "source": spec,
            "format": fmt, "params": parameter_count(tf, model, variables), "bytes_on_disk": size,
            "signature": entry.signature, "signatures": entry.signatures,
            "inputs": [f.to_dict() for f in fed],
            "imports": list(config.get("imports") or []),
            "unsafe_deserialization": bool(config.get("unsafe_deserialization"))}
