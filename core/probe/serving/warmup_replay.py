"""Replaying a warm-up file's records through the model's signatures, as TF Serving would.

No model server runs here, so the file is proven the way TF Serving uses it at load: each
Predict request is checked against the signature it names (the signature exists, the
input names are exactly the signature's, each dtype and shape fits) and then run through
that signature. Each record gets ok, failed with the reason, or skipped (a kind of record
this replay does not run), and the time its call took.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Tuple

from ..failure import first_line
from .prediction_log import PredictionLogs, requested_signature

FIX = "Write the file again from the model (`tflaunch serving-warmup --force --model MODEL`), or fix that record."


class RecordProblem(Exception):  # noqa: N818 (an outcome of a record, not a bug)
    """Why a record cannot be replayed; `status` is failed or skipped."""

    def __init__(self, reason: str, status: str = "failed") -> None:
        super().__init__(reason)
        self.reason, self.status = reason, status


def _names(names: Any) -> str:
    return ", ".join(sorted(names)) or "none"


def _request(tf: Any, logs: PredictionLogs, signatures: Dict[str, Any], data: bytes) -> Tuple[str, Any, Dict[str, Any]]:
    """(signature name, its function, the inputs as tensors) of one record."""
    try:
        log = logs.parse(data)
    except Exception as exc:  # google.protobuf's DecodeError, whose module varies by version
        raise RecordProblem(f"it is not a PredictionLog (protobuf: {first_line(exc)}). {FIX}") from None
    if not log.HasField("predict_log"):
        others = logs.other_kinds(log)
        if others:
            raise RecordProblem(f"it holds a {others[0]}, which TF Serving replays through its own API; tflaunch "
                                "replays Predict requests only, so this one is not proven here", "skipped")
        raise RecordProblem(f"it holds no Predict request: it is not a PredictionLog, or an empty one. {FIX}")
    name = requested_signature(log)
    if name not in signatures:
        raise RecordProblem(f"it names signature '{name}', which the model lacks (it has {_names(signatures)}). "
                            f"{FIX}")
    function = signatures[name]
    _, specs = function.structured_input_signature
    given = log.predict_log.request.inputs
    extra, missing = sorted(set(given) - set(specs)), sorted(set(specs) - set(given))
    if extra or missing:
        wrong = f"has input '{extra[0]}', which" if extra else f"lacks input '{missing[0]}', which"
        raise RecordProblem(f"it {wrong} signature '{name}' takes (it takes exactly {_names(specs)}), and TF Serving "
                            f"refuses a request whose inputs differ. {FIX}")
    tensors = {}
    for key in sorted(specs):
        spec, proto = specs[key], logs.tensor(given[key])
        try:
            dtype = tf.as_dtype(proto.dtype)
            array = tf.make_ndarray(proto)
        except Exception as exc:  # an invalid dtype or content that does not fit the shape
            raise RecordProblem(f"input '{key}' holds no readable tensor ({first_line(exc)}). {FIX}") from None
        if dtype != spec.dtype:
            raise RecordProblem(f"input '{key}' is {dtype.name}, but signature '{name}' takes {spec.dtype.name}. "
                                f"{FIX}")
        if not spec.shape.is_compatible_with(array.shape):
            shape = "x".join(str(d) for d in array.shape) or "a scalar"
            wanted = "x".join("?" if d is None else str(d) for d in spec.shape.as_list())
            raise RecordProblem(f"input '{key}' has shape {shape}, and signature '{name}' takes {wanted}. {FIX}")
        tensors[key] = tf.constant(array, dtype=dtype)
    return name, function, tensors


def _outcome(number: int, signature: Optional[str], status: str, seconds: Optional[float],
             reason: str = "") -> Dict[str, Any]:
    return {"record": number, "signature": signature, "status": status, "seconds": seconds, "reason": reason}


def replay(tf: Any, logs: PredictionLogs, model: Any, records: List[bytes]) -> List[Dict[str, Any]]:
    """Each record checked and called through its signature, in the file's order."""
    signatures = dict(getattr(model, "signatures", {}) or {})
    outcomes = []
    for number, data in enumerate(records, 1):
        try:
            name, function, tensors = _request(tf, logs, signatures, data)
        except RecordProblem as problem:
            outcomes.append(_outcome(number, None, problem.status, None, problem.reason))
            continue
        start = time.perf_counter()
        try:
            outputs = function(**tensors)
            tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, outputs)  # finished, on host
        except Exception as exc:
            outcomes.append(_outcome(number, name, "failed", None, f"signature '{name}' failed on it: "
                                     f"{type(exc).__name__}: {first_line(exc)}. {FIX}"))
            continue
        outcomes.append(_outcome(number, name, "ok", time.perf_counter() - start))
    return outcomes
