"""Calling the model: its traced function, generated inputs, first and steady calls."""

from __future__ import annotations

import statistics
import time
from typing import Any, Dict, List, Tuple

from .failure import ProbeFailure

# typing aliases, not builtin generics: the user's interpreter may be Python 3.8.
Specs = Tuple[List[Any], Dict[str, Any]]
Inputs = Tuple[List[Any], Dict[str, Any]]


def trace(tf: Any, model: Any, jit_compile: bool) -> tuple[Any, Specs]:
    """A concrete function for the model and the TensorSpecs of its inputs.

    `jit_compile` wraps the model's function in tf.function(jit_compile=True), for Keras
    models and SavedModel signatures alike: XLA then compiles the whole forward pass.
    """
    if not hasattr(model, "inputs"):  # a SavedModel: its signatures are already traced
        signatures = getattr(model, "signatures", {})
        if not signatures:
            raise ProbeFailure("no_signature", "The SavedModel has no serving signature; "
                               "export it with model.export(path).")
        signature = signatures.get("serving_default") or next(iter(signatures.values()))
        args, kwargs = signature.structured_input_signature
        if not jit_compile:
            return signature, (list(args), dict(kwargs))
        compiled = tf.function(lambda *a, **k: signature(*a, **k), jit_compile=True)
        return compiled.get_concrete_function(*args, **kwargs), (list(args), dict(kwargs))
    if not model.inputs:
        raise ProbeFailure("no_signature", "The model has no known inputs; build it on an Input.")
    names = [t.name.split(":")[0] for t in model.inputs]
    specs = {n: tf.TensorSpec(t.shape, t.dtype, name=n) for n, t in zip(names, model.inputs)}
    structure = getattr(model, "_inputs_struct", None)

    def forward(**kwargs: Any) -> Any:
        arg: Any = kwargs if isinstance(structure, dict) else [kwargs[n] for n in names]
        return model(arg[0] if isinstance(arg, list) and len(arg) == 1 else arg, training=False)

    fn = tf.function(forward, jit_compile=True if jit_compile else None)
    return fn.get_concrete_function(**specs), ([], specs)


def make_inputs(tf: Any, specs: Specs, batch: int) -> Inputs:
    def tensor(spec: Any) -> Any:
        shape = [batch if i == 0 and d is None else (d or 1) for i, d in enumerate(spec.shape)]
        if spec.dtype.is_floating:
            return tf.random.stateless_uniform(shape, seed=(0, 0), dtype=spec.dtype)
        if spec.dtype == tf.string:
            return tf.fill(shape, "")
        return tf.zeros(shape, dtype=spec.dtype)

    args, kwargs = specs
    return [tensor(s) for s in args], {k: tensor(s) for k, s in kwargs.items()}


def infer(tf: Any, fn: Any, inputs: Inputs) -> Any:
    """One inference, with outputs copied to host so asynchronous devices have finished."""
    outputs = fn(*inputs[0], **inputs[1])
    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, outputs)


def steady_latency(tf: Any, fn: Any, inputs: Inputs, runs: int) -> dict[str, float]:
    samples = []
    for _ in range(max(runs, 0)):
        start = time.perf_counter()
        infer(tf, fn, inputs)
        samples.append(time.perf_counter() - start)
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)
    return {"n": len(ordered), "median": statistics.median(ordered), "min": ordered[0], "max": ordered[-1],
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]}
