"""The probe's event protocol, version 1, and its parser.

Wire format: one JSON object per line (UTF-8, ``\\n``-terminated) on the probe's stdout,
which the probe keeps for events alone (model prints and TensorFlow's C++ logs go to
stderr). Every object carries:

- ``v``: protocol version, the integer 1;
- ``ts``: wall-clock time (seconds since the epoch, float) when the event was made;
- ``phase``: one of :data:`tflaunch.core.phases.PHASES`;
- ``event``: the kind, one of the keys of :data:`_BUILDERS` below.

Kinds and their extra fields:

- ``hello``: first line. ``pid`` (int), ``process_age`` (seconds since the OS started the
  process, or null when unknown), ``python`` (str).
- ``phase_start``: no extra fields.
- ``phase_end``: ``duration`` (s), ``rss`` and ``peak_rss`` (bytes, or null), and for
  ``steady`` a ``latency`` object (``median``, ``min``, ``max``, ``p90``, ``n``, seconds).
- ``settings``: ``applied``, an object of every setting as read back inside the child.
- ``inputs``: after load, before anything is generated: ``inputs`` (a list of ``name``,
  ``dtype``, ``shape`` with null for an unknown dimension, batch first), ``signature``
  (the SavedModel signature called, or null for a Keras model) and ``signatures`` (all).
- ``result``: ``environment`` (tensorflow, keras, python, cpu, cores, gpus[], ...) and
  ``model`` (name, format, params, bytes_on_disk, signature, signatures, imports,
  unsafe_deserialization, and inputs[]: each declared input with ``fed_shape``,
  ``fed_dtype``, ``assumed`` (a default filled an unknown dimension) and ``values``).
- ``error``: ``kind`` (a stable identifier such as ``model_not_found``), ``message`` (one
  sentence a user can act on) and ``detail`` (traceback tail, may be empty).
- ``saved``: the probe's sample-export mode wrote ``path`` in ``format``.

A reader must skip lines it cannot use: :class:`EventParser` counts malformed lines (not
JSON, wrong types, unknown phase) and unknown kinds or versions separately, and never
raises.
"""

from __future__ import annotations

import codecs
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..phases import PHASES

PROTOCOL_VERSION = 1


@dataclass(frozen=True)
class Hello:
    ts: float
    phase: str
    pid: int
    process_age: float | None
    python: str


@dataclass(frozen=True)
class PhaseStart:
    ts: float
    phase: str


@dataclass(frozen=True)
class PhaseEnd:
    ts: float
    phase: str
    duration: float
    rss: int | None
    peak_rss: int | None
    latency: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SettingsApplied:
    ts: float
    phase: str
    applied: dict[str, Any]


@dataclass(frozen=True)
class Result:
    ts: float
    phase: str
    environment: dict[str, Any]
    model: dict[str, Any]


@dataclass(frozen=True)
class InputsListed:
    ts: float
    phase: str
    inputs: list[dict[str, Any]]
    signature: str | None
    signatures: list[str]


@dataclass(frozen=True)
class ProbeError:
    ts: float
    phase: str
    kind: str
    message: str
    detail: str = ""


@dataclass(frozen=True)
class Saved:
    ts: float
    phase: str
    path: str
    format: str


Event = Hello | PhaseStart | PhaseEnd | SettingsApplied | InputsListed | Result | ProbeError | Saved


class _Malformed(Exception):  # noqa: N818 (private; a protocol violation, not a bug)
    """A line that is JSON but does not follow the protocol."""


def _number(obj: dict[str, Any], key: str) -> float:
    value = obj.get(key)
    # bool is an int subclass; a true/false duration is malformed, not 1 s.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Malformed(key)
    return float(value)


def _count(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Malformed(key)
    return value


def _optional_number(obj: dict[str, Any], key: str) -> float | None:
    return None if obj.get(key) is None else _number(obj, key)


def _optional_count(obj: dict[str, Any], key: str) -> int | None:
    return None if obj.get(key) is None else _count(obj, key)


def _text(obj: dict[str, Any], key: str, default: str | None = None) -> str:
    value = obj.get(key, default)
    if not isinstance(value, str):
        raise _Malformed(key)
    return value


def _mapping(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key, {})
    if not isinstance(value, dict):
        raise _Malformed(key)
    return value


MAX_INPUTS = 1024
MAX_RANK = 32


def _inputs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's declared inputs: name, dtype and shape (None for an unknown dimension)."""
    raw = obj.get("inputs")
    if not isinstance(raw, list) or len(raw) > MAX_INPUTS:
        raise _Malformed("inputs")
    out = []
    for item in raw:
        if not isinstance(item, dict):
            raise _Malformed("inputs")
        shape = item.get("shape")
        if not isinstance(shape, list) or len(shape) > MAX_RANK or not all(
                d is None or (isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40) for d in shape):
            raise _Malformed("shape")
        out.append({"name": _text(item, "name")[:200], "dtype": _text(item, "dtype")[:40], "shape": shape})
    return out


def _names(obj: dict[str, Any], key: str) -> list[str]:
    raw = obj.get(key) or []
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise _Malformed(key)
    return [n[:200] for n in raw[:MAX_INPUTS]]


def _latency(obj: dict[str, Any]) -> dict[str, float]:
    raw = _mapping(obj, "latency")
    return {k: (_count(raw, k) if k == "n" else _number(raw, k)) for k in raw}


_BUILDERS: dict[str, Callable[[dict[str, Any], float, str], Event]] = {
    "hello": lambda o, ts, ph: Hello(
        ts, ph, _count(o, "pid"), _optional_number(o, "process_age"), _text(o, "python", "")
    ),
    "phase_start": lambda o, ts, ph: PhaseStart(ts, ph),
    "phase_end": lambda o, ts, ph: PhaseEnd(
        ts,
        ph,
        _number(o, "duration"),
        _optional_count(o, "rss"),
        _optional_count(o, "peak_rss"),
        _latency(o),
    ),
    "settings": lambda o, ts, ph: SettingsApplied(ts, ph, _mapping(o, "applied")),
    "inputs": lambda o, ts, ph: InputsListed(
        ts, ph, _inputs(o), None if o.get("signature") is None else _text(o, "signature"), _names(o, "signatures")
    ),
    "result": lambda o, ts, ph: Result(ts, ph, _mapping(o, "environment"), _mapping(o, "model")),
    "error": lambda o, ts, ph: ProbeError(
        ts, ph, _text(o, "kind"), _text(o, "message"), _text(o, "detail", "")
    ),
    "saved": lambda o, ts, ph: Saved(ts, ph, _text(o, "path"), _text(o, "format")),
}


def encode(event: str, phase: str, ts: float, **fields: Any) -> str:
    """One protocol line (without newline), for tests and tools that speak to a reader.

    The probe has its own copy of this logic because it must run without tflaunch.
    """
    return json.dumps({"v": PROTOCOL_VERSION, "ts": ts, "phase": phase, "event": event, **fields})


class EventParser:
    """Turns protocol lines into typed events; skips and counts everything else."""

    def __init__(self) -> None:
        self.malformed = 0
        self.unknown = 0

    def parse(self, line: str | bytes) -> Event | None:
        try:
            if isinstance(line, bytes):
                line = line.decode("utf-8")
            obj = json.loads(line)
        except (UnicodeDecodeError, ValueError, RecursionError):
            self.malformed += 1
            return None
        if not isinstance(obj, dict):
            self.malformed += 1
            return None
        version, kind = obj.get("v"), obj.get("event")
        if version != PROTOCOL_VERSION or isinstance(version, bool) or kind not in _BUILDERS:
            self.unknown += 1
            return None
        try:
            phase = _text(obj, "phase")
            if phase not in PHASES:
                raise _Malformed("phase")
            return _BUILDERS[kind](obj, _number(obj, "ts"), phase)
        except (_Malformed, TypeError, ValueError):
            self.malformed += 1
            return None


class LineBuffer:
    """Splits a byte stream into complete lines.

    Chunks from a pipe can end mid-line or mid-way through a UTF-8 character; this keeps
    the tail until its line is complete. Undecodable bytes become U+FFFD instead of
    raising, and a line longer than ``max_line`` is cut so a runaway writer cannot make
    the buffer grow without bound.
    """

    def __init__(self, max_line: int = 1 << 20) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial = ""
        self._max_line = max_line

    def feed(self, chunk: bytes) -> list[str]:
        text = self._partial + self._decoder.decode(chunk)
        *lines, self._partial = text.split("\n")
        if len(self._partial) > self._max_line:
            lines.append(self._partial[: self._max_line])
            self._partial = ""
        return [line.rstrip("\r") for line in lines]

    def flush(self) -> list[str]:
        """Whatever is left when the stream closes (a last line without newline)."""
        rest = (self._partial + self._decoder.decode(b"", final=True)).rstrip("\r")
        self._partial = ""
        return [rest] if rest else []
