"""Calling the model: its traced function, the first call and the steady calls."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Dict, List, Optional

from .entry_point import EntryPoint
from .input_values import Fed


def trace(tf: Any, entry: EntryPoint, fed: List[Fed], jit_compile: bool) -> Any:
    """A concrete function of the model's one argument, traced for the declared shapes
    (unknown dimensions stay unknown, as in the user's tf.function) and the fed dtypes.

    `jit_compile` wraps the forward pass in tf.function(jit_compile=True), for Keras
    models and SavedModel signatures alike: XLA then compiles the whole of it.
    """
    if entry.function is not None and not jit_compile and all(f.dtype == f.declared.dtype for f in fed):
        return _Signature(entry)  # a SavedModel's signature is traced already: use it as is
    specs = {f.name: tf.TensorSpec(f.declared.shape or f.shape, tf.as_dtype(f.dtype), name=_spec_name(f.name))
             for f in fed}
    fn = tf.function(entry.call, jit_compile=True if jit_compile else None)
    return fn.get_concrete_function(entry.pack(specs))


def eager_call(entry: EntryPoint, model: Any, how: str) -> tuple[Callable[[Any], Any], str]:
    """The model called as written, with no traced function of tflaunch's: `eager`
    (model(x, training=False), a signature called directly) or `predict`
    (model.predict_on_batch, Keras' own compiled predict function). Returns the callable
    and the call really used: a SavedModel has no predict, so it is called directly."""
    if how == "predict" and entry.function is None and hasattr(model, "predict_on_batch"):
        return model.predict_on_batch, "predict"
    used = "eager" if how == "eager" else "eager (predict needs a Keras model: its signature was called)"
    return entry.call, used


class _Signature:
    """A signature called as the traced functions are: with the packed argument."""

    def __init__(self, entry: EntryPoint) -> None:
        self.function = entry.function

    def __call__(self, packed: Dict[str, Any]) -> Any:
        return self.function(**packed)


def _spec_name(name: str) -> str:
    """TensorSpec names become graph placeholder names, which allow fewer characters."""
    return "".join(c if c.isalnum() or c in "_.-/" else "_" for c in name).lstrip("_.-/") or "input"


def infer(tf: Any, fn: Any, packed: Any) -> Any:
    """One inference, with outputs copied to host so asynchronous devices have finished."""
    outputs = fn(packed)
    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, outputs)


def all_finite(tf: Any, outputs: Any) -> bool:
    """Whether every floating output is finite: NaN from a too-small input is no result."""
    import numpy as np  # TensorFlow's own dependency, present wherever it is

    for value in tf.nest.flatten(outputs):
        array = np.asarray(value)
        if array.dtype.kind in "fc" and not np.isfinite(array).all():
            return False
    return True


PROGRESS_EVERY_S = 0.25  # a long steady phase says how far it is, at most 4 times a second


def steady_latency(tf: Any, fn: Any, packed: Any, runs: int,
                   progress: Optional[Callable[[int, int], None]] = None) -> dict[str, float]:
    """Latency of `runs` calls; `progress(done, total)` is told between calls, outside the
    timed part, so reporting costs the figures nothing."""
    samples = []
    total = max(runs, 0)
    if progress is not None and total:
        progress(0, total)  # the count shows from the start, not after the first report
    reported = time.perf_counter()
    for _ in range(total):
        start = time.perf_counter()
        infer(tf, fn, packed)
        end = time.perf_counter()
        samples.append(end - start)
        if progress is not None and end - reported >= PROGRESS_EVERY_S and len(samples) < total:
            progress(len(samples), total)
            reported = end
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)
    return {"n": len(ordered), "median": statistics.median(ordered), "min": ordered[0], "max": ordered[-1],
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]}
