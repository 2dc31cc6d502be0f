"""Where a loaded model is called, and with what: its inputs by the names a user sees.

A Keras model is called as its code calls it: a dict of inputs by dict key (not by the
tensor names inside), a list in order, or one tensor. A SavedModel is called through one
signature, by its argument names; the user picks it with --signature, and without one
the probe takes serving_default, or the only signature there is; among several others it
asks rather than guesses.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ..failure import ProbeFailure

# typing aliases, not builtin generics: the user's interpreter may be Python 3.8.
Values = Dict[str, Any]


class Declared:
    """One input as the model declares it: shape with None for unknown dimensions."""

    def __init__(self, name: str, shape: List[Optional[int]], dtype: str) -> None:
        self.name, self.shape, self.dtype = name, shape, dtype

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "shape": self.shape, "dtype": self.dtype}


class EntryPoint:
    def __init__(self, inputs: List[Declared], pack: Callable[[Values], Any], call: Callable[..., Any],
                 signature: Optional[str] = None, signatures: Optional[List[str]] = None,
                 function: Any = None) -> None:
        self.inputs = inputs
        self.pack = pack  # {name: value} -> the one argument the model takes
        self.call = call  # the Python function to trace, of that one argument
        self.signature, self.signatures = signature, signatures or []
        self.function = function  # the signature's own concrete function, already traced

    def describe(self) -> Dict[str, Any]:
        return {"inputs": [i.to_dict() for i in self.inputs], "signature": self.signature,
                "signatures": self.signatures}


def _shape(tensor: Any) -> List[Optional[int]]:
    shape = getattr(tensor, "shape", None)
    if shape is None or getattr(shape, "rank", 0) is None:
        return []
    return [None if d is None else int(d) for d in list(shape)]


def _dtype(tensor: Any) -> str:
    dtype = getattr(tensor, "dtype", "float32")
    return str(getattr(dtype, "name", dtype))


def entry_point(model: Any, signature: Optional[str]) -> EntryPoint:
    if hasattr(model, "inputs") and hasattr(model, "layers"):
        if signature:
            raise ProbeFailure("no_signature", f"--signature {signature} is for SavedModels; this is a Keras "
                               "model, called directly. Remove --signature.")
        return _keras_entry(model)
    return _signature_entry(model, signature)


def _keras_entry(model: Any) -> EntryPoint:
    try:
        tensors = list(model.inputs or [])
    except (AttributeError, ValueError):
        tensors = []
    if not tensors:
        raise ProbeFailure("no_signature", "The model has no known inputs (a subclassed model that was never "
                           "built). Build it on keras.Input(...) before saving, or export a SavedModel.")
    structure = getattr(model, "_inputs_struct", None)
    if isinstance(structure, dict) and all(hasattr(t, "shape") for t in structure.values()):
        keys = list(structure)
        declared = [Declared(str(k), _shape(structure[k]), _dtype(structure[k])) for k in keys]

        def pack(values: Values) -> Any:
            return {k: values[str(k)] for k in keys}
    else:
        names = [str(t.name).split(":")[0] for t in tensors]
        declared = [Declared(n, _shape(t), _dtype(t)) for n, t in zip(names, tensors)]

        def pack(values: Values) -> Any:
            return values[names[0]] if len(names) == 1 else [values[n] for n in names]

    def call(x: Any) -> Any:
        return model(x, training=False)

    return EntryPoint(declared, pack, call)


def _signature_entry(model: Any, wanted: Optional[str]) -> EntryPoint:
    signatures = dict(getattr(model, "signatures", {}) or {})
    names = sorted(signatures)
    if not signatures:
        raise ProbeFailure("no_signature", "The SavedModel has no serving signature, so there is nothing to "
                           "call. Export it with model.export(path) or tf.saved_model.save(obj, path, "
                           "signatures=...).")
    if wanted:
        if wanted not in signatures:
            raise ProbeFailure("unknown_signature", f"The SavedModel has no signature '{wanted}'; it has "
                               f"{', '.join(names)}. Choose one with --signature NAME.")
        chosen = wanted
    elif "serving_default" in signatures or len(names) == 1:
        chosen = "serving_default" if "serving_default" in signatures else names[0]
    else:  # which one the user's code calls is theirs to say: measuring another would mislead
        raise ProbeFailure("unknown_signature", f"The SavedModel has {len(names)} signatures and no "
                           f"serving_default: {', '.join(names)}. Choose one with --signature NAME.")
    function = signatures[chosen]
    _, kwargs = function.structured_input_signature
    keys = sorted(kwargs)
    declared = [Declared(k, _shape(kwargs[k]), _dtype(kwargs[k])) for k in keys]

    def pack(values: Values) -> Any:
        return {k: values[k] for k in keys}

    def call(x: Any) -> Any:
        return function(**x)

    return EntryPoint(declared, pack, call, chosen, names, function)
