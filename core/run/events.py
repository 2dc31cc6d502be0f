"""The probe's event protocol, version 1, and its parser.

Wire format: one JSON object per line (UTF-8, ``\\n``-terminated) on the probe's stdout,
which the probe keeps for events alone (model prints and TensorFlow's C++ logs go to
stderr). Every object carries:

- ``v``: protocol version, the integer 1;
- ``ts``: wall-clock time (seconds since the epoch, float) when the event was made;
- ``phase``: a phase name: one of the probe's :data:`tflaunch.core.phases.PHASES`, one a
  program's launch hook observed, or the user's own (a mark); any name matching
  :data:`tflaunch.core.phases.NAME` is legal (the vocabulary is open, see phases.py);
- ``event``: the kind, one of the keys of :data:`_BUILDERS` below.

Kinds and their extra fields:

- ``hello``: first line. ``pid`` (int), ``process_age`` (seconds since the OS started the
  process, or null when unknown), ``python`` (str).
- ``phase_start``: no extra fields.
- ``phase_end``: ``duration`` (s), ``rss`` and ``peak_rss`` (bytes, or null), ``start`` (optional:
  when the phase began, by the child's wall clock; a program's observer sends it, since it
  reports some phases after they ended, such as build), and for
  ``steady`` a ``latency`` object (``median``, ``min``, ``max``, ``p90``, ``n``, seconds); ``retraces``
  a ``count`` (traces beyond each tf.function's first; the duration is their time); from the
  probe, ``read_bytes`` and ``rchar`` (bytes read from storage and bytes read at all during
  the phase, the probe's own process, /proc/self/io; absent where unknown).
- ``settings``: ``applied``, an object of every setting as read back inside the child.
- ``inputs``: after load, before anything is generated: ``inputs`` (a list of ``name``,
  ``dtype``, ``shape`` with null for an unknown dimension, batch first), ``signature``
  (the SavedModel signature called, or null for a Keras model) and ``signatures`` (all).
- ``result``: ``environment`` (tensorflow, keras, python, cpu, cores, gpus[], ...) and
  ``model`` (name, format, params, bytes_on_disk, signature, signatures, imports,
  unsafe_deserialization, and inputs[]: each declared input with ``fed_shape``,
  ``fed_dtype``, ``assumed`` (a default filled an unknown dimension) and ``values``).
  The probe's last word: a reader ignores the events a model run's child writes after it,
  and says so in the run's notes (session.ProbeSession). A program's launch hook sends its
  ``result`` (the versions it saw) early, and goes on.
- ``error``: ``kind`` (a stable identifier such as ``model_not_found``), ``message`` (one
  sentence a user can act on) and ``detail`` (traceback tail, may be empty).
- ``saved``: the probe's sample-export mode wrote ``path`` in ``format``.
- ``imports``: after ``import``, the import X-ray (tflaunch_probe.import_xray): ``total``,
  ``native`` (s, self time of extension modules) and ``native_share`` (0-1), ``modules``
  (count), ``groups`` (``name``, ``self``, ``cumulative`` s, ``modules``) and ``packages``
  (``name``, ``self``, ``modules``), ``compiled`` (per package: ``modules``, ``checked``,
  ``written``, ``uncached``, ``folder``), ``read_bytes`` (from storage, or null),
  ``onednn`` (TF_ENABLE_ONEDNN_OPTS or null), ``keras`` (``keras``, ``tf_keras`` versions).
- ``mark``: a program's own point in time (``tflaunch_mark.mark(NAME)``): ``name``.
- ``notice``: a program's observer says what it cannot observe (a Keras on another backend):
  ``message``, one sentence kept with the run's notes. (Where --until needs what it cannot see,
  it sends an ``error`` of kind ``not_observable`` instead and the program is stopped.)
- ``anatomy``: an extra, profiled run's first step or first call cut into parts
  (run/anatomy.py checks it): ``window`` (s), ``parts`` (``part``, ``seconds``, ``names``),
  ``not_attributed`` (s), or ``error`` when the trace could not be read.
- ``serving_warmup``: the probe's serving warm-up mode's answer (its only word besides an
  ``error``): the report of the TF Serving warm-up file written or checked, as
  warmup_report.parse_report checks it (``action``, ``path``, ``records``, ``outcomes``, ...).
- ``watching``: a program's observer, at the ready point: what watching cost the program so
  far, by its own clock (probe/observer/cost.py): ``setup`` and ``hooks`` (s), ``calls`` (count).
- ``progress``: during a phase that repeats work (``steady``): ``done`` of ``total`` calls
  (counts, ``done`` at most ``total``), a few times a second at most.

A reader must skip lines it cannot use: :class:`EventParser` counts malformed lines (not
JSON, wrong types, unknown phase, a figure out of range) and unknown kinds or versions
separately, and never raises. Figures are checked where they enter (finite and in a sane
range, see the limits below), texts and descriptions capped: what a child sends cannot
crash a table, stall the app or fill the history.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..phases import NAME
from .anatomy import Anatomy, checked_anatomy
from .environment_facts import EnvironmentFacts
from .import_facts import ImportFacts
from .model_facts import ModelFacts
from .protocol import EPOCH_RANGE, PROTOCOL_VERSION
from .read_back import ReadBack
from .warmup_report import WarmupError, WarmupReport, parse_report
from .watch_cost import MAX_CALLS, WatchCost


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
    parts: dict[str, float] = field(default_factory=dict)  # seconds by part of the phase
    count: int | None = None  # retraces: how many
    read_bytes: int | None = None  # bytes the child read from storage during the phase
    rchar: int | None = None  # bytes its reads returned, the page cache's included
    start: float | None = None  # when the phase began, by the child's clock (a program's observer sends it)


@dataclass(frozen=True)
class Mark:
    ts: float
    phase: str
    name: str


@dataclass(frozen=True)
class SettingsApplied:
    ts: float
    phase: str
    applied: ReadBack


@dataclass(frozen=True)
class Result:
    ts: float
    phase: str
    environment: EnvironmentFacts
    model: ModelFacts


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
class Notice:
    ts: float
    phase: str
    message: str


@dataclass(frozen=True)
class Saved:
    ts: float
    phase: str
    path: str
    format: str


@dataclass(frozen=True)
class Progress:
    ts: float
    phase: str
    done: int
    total: int


@dataclass(frozen=True)
class ImportsMeasured:
    ts: float
    phase: str
    imports: ImportFacts


@dataclass(frozen=True)
class AnatomyMeasured:
    ts: float
    phase: str
    anatomy: Anatomy  # as run.anatomy.checked_anatomy made it


@dataclass(frozen=True)
class WatchingCounted:
    ts: float
    phase: str
    cost: WatchCost


@dataclass(frozen=True)
class ServingWarmupAnswered:
    ts: float
    phase: str
    report: WarmupReport


Event = (Hello | PhaseStart | PhaseEnd | SettingsApplied | InputsListed | Result | ProbeError | Saved | Progress
         | ImportsMeasured | Mark | AnatomyMeasured | ServingWarmupAnswered | Notice | WatchingCounted)


class _Malformed(Exception):  # noqa: N818 (private; a protocol violation, not a bug)
    """A line that is JSON but does not follow the protocol."""


# What a value may be before it reaches a record, a table or the history. A child can send
# anything JSON can spell (1e308 is finite, and JSON's NaN/Infinity parse too); a figure
# outside these ranges is a broken or hostile child, and its event is skipped, not stored.
MAX_SECONDS = 1e6  # a phase or latency figure: over eleven days is no measurement
CLOCK_SLACK_S = 0.05  # a phase's start and end may read a little after the event's own ts (another clock read)
MAX_BYTES = 1 << 50  # a memory figure: a petabyte
MAX_COUNT = (1 << 31) - 1  # pids and call counts
MAX_INT = 1 << 63  # any other whole number (a model's parameters, bytes on disk)
MAX_TEXT = 4096  # characters kept of a name, path or message
MAX_DETAIL = 16384  # of an error's traceback tail
MAX_DEPTH = 8  # nesting in settings, environment and model descriptions
MAX_ITEMS = 20000  # values in one of those, all levels together
LATENCY_KEYS = ("median", "min", "max", "p90", "mean")


def _number(obj: dict[str, Any], key: str, low: float = 0.0, high: float = MAX_SECONDS) -> float:
    value = obj.get(key)
    # bool is an int subclass; a true/false duration is malformed, not 1 s.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise _Malformed(key)
    return float(value)


def _count(obj: dict[str, Any], key: str, high: int = MAX_COUNT) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise _Malformed(key)
    return value


def _optional_number(obj: dict[str, Any], key: str, low: float = 0.0, high: float = MAX_SECONDS) -> float | None:
    return None if obj.get(key) is None else _number(obj, key, low, high)


def _optional_count(obj: dict[str, Any], key: str, high: int = MAX_COUNT) -> int | None:
    return None if obj.get(key) is None else _count(obj, key, high)


def _text(obj: dict[str, Any], key: str, default: str | None = None, limit: int = MAX_TEXT) -> str:
    value = obj.get(key, default)
    if not isinstance(value, str):
        raise _Malformed(key)
    return value[:limit]


def _mapping(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key, {})
    if not isinstance(value, dict):
        raise _Malformed(key)
    budget = [MAX_ITEMS]
    return {str(k)[:MAX_TEXT]: _plain(v, 1, budget, key) for k, v in value.items()}


def _plain(value: Any, depth: int, budget: list[int], key: str) -> Any:
    """`value` with every text capped and every non-finite number null; too deep or too
    big a structure is malformed (a description, not a data dump)."""
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise _Malformed(key)
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and not -MAX_INT <= value < MAX_INT:
        return None  # beyond a 64-bit whole number: the history could not read it back (2**63 did)
    if isinstance(value, list):
        return [_plain(v, depth + 1, budget, key) for v in value]
    if isinstance(value, dict):
        return {str(k)[:MAX_TEXT]: _plain(v, depth + 1, budget, key) for k, v in value.items()}
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


def _name(obj: dict[str, Any], key: str) -> str:
    """A phase or mark name: legal by its syntax, not by a list (an unknown one is data)."""
    value = obj.get(key)
    if not isinstance(value, str) or not NAME.match(value):
        raise _Malformed(key)
    return value


def _clamped_age(age: float | None) -> float | None:
    return None if age is None else max(age, 0.0)


def _names(obj: dict[str, Any], key: str) -> list[str]:
    raw = obj.get(key) or []
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise _Malformed(key)
    return [n[:200] for n in raw[:MAX_INPUTS]]


def _latency(obj: dict[str, Any]) -> dict[str, float]:
    raw = obj.get("latency", {})
    if not isinstance(raw, dict):
        raise _Malformed("latency")
    out: dict[str, float] = {k: _number(raw, k) for k in LATENCY_KEYS if k in raw}
    if "n" in raw:
        out["n"] = _count(raw, "n")
    return out


MAX_PARTS = 16


def _parts(obj: dict[str, Any]) -> dict[str, float]:
    """A phase's parts: a few named durations, each a finite number of seconds."""
    raw = obj.get("parts", {})
    if not isinstance(raw, dict) or len(raw) > MAX_PARTS:
        raise _Malformed("parts")
    return {str(name)[:40]: _number(raw, name) for name in raw}


def _start(obj: dict[str, Any], ts: float) -> float | None:
    """A phase's own start: a time on the shared wall clock, no later than the event itself
    and no earlier than its duration allows (a start that does not fit is a broken child)."""
    start = _optional_number(obj, "start", *EPOCH_RANGE)
    if start is not None and start + _number(obj, "duration") > ts + CLOCK_SLACK_S:
        raise _Malformed("start")
    return start


_BUILDERS: dict[str, Callable[[dict[str, Any], float, str], Event]] = {
    "hello": lambda o, ts, ph: Hello(
        # An age a tick below zero is the OS's 10 ms clock, not a lie.
        ts, ph, _count(o, "pid"), _clamped_age(_optional_number(o, "process_age", -1.0)), _text(o, "python", "")
    ),
    "phase_start": lambda o, ts, ph: PhaseStart(ts, ph),
    "phase_end": lambda o, ts, ph: PhaseEnd(
        ts,
        ph,
        _number(o, "duration"),
        _optional_count(o, "rss", MAX_BYTES),
        _optional_count(o, "peak_rss", MAX_BYTES),
        _latency(o),
        _parts(o),
        _optional_count(o, "count"),
        _optional_count(o, "read_bytes", MAX_BYTES),
        _optional_count(o, "rchar", MAX_BYTES),
        _start(o, ts),
    ),
    "mark": lambda o, ts, ph: Mark(ts, ph, _name(o, "name")),
    "settings": lambda o, ts, ph: SettingsApplied(ts, ph, ReadBack(_mapping(o, "applied"))),
    "inputs": lambda o, ts, ph: InputsListed(
        ts, ph, _inputs(o), None if o.get("signature") is None else _text(o, "signature"), _names(o, "signatures")
    ),
    "result": lambda o, ts, ph: Result(
        ts, ph, EnvironmentFacts(_mapping(o, "environment")), ModelFacts(_mapping(o, "model"))),
    "error": lambda o, ts, ph: ProbeError(
        ts, ph, _text(o, "kind", limit=200), _text(o, "message"), _text(o, "detail", "", MAX_DETAIL)
    ),
    "notice": lambda o, ts, ph: Notice(ts, ph, _text(o, "message")),
    "saved": lambda o, ts, ph: Saved(ts, ph, _text(o, "path"), _text(o, "format")),
    "progress": lambda o, ts, ph: _progress(ts, ph, _count(o, "done"), _count(o, "total")),
    "imports": lambda o, ts, ph: ImportsMeasured(ts, ph, checked_imports(o)),
    "anatomy": lambda o, ts, ph: AnatomyMeasured(ts, ph, replace(checked_anatomy(o), phase=ph)),
    "serving_warmup": lambda o, ts, ph: ServingWarmupAnswered(ts, ph, _warmup_report(o)),
    "watching": lambda o, ts, ph: WatchingCounted(
        ts, ph, WatchCost(_number(o, "setup"), _number(o, "hooks"), _count(o, "calls", MAX_CALLS))),
}


def _warmup_report(obj: dict[str, Any]) -> WarmupReport:
    try:
        return parse_report(obj)
    except WarmupError:
        raise _Malformed("serving_warmup") from None


MAX_IMPORT_ROWS = 64  # groups or packages in an import X-ray


def _import_rows(obj: dict[str, Any], key: str, figures: tuple[str, ...]) -> list[dict[str, Any]]:
    raw = obj.get(key, [])
    if not isinstance(raw, list):
        raise _Malformed(key)
    return [{"name": _text(row, "name", limit=200), **{f: _number(row, f) for f in figures},
             "modules": _count(row, "modules")} for row in raw[:MAX_IMPORT_ROWS] if isinstance(row, dict)]


def _optional_text(obj: dict[str, Any], key: str, limit: int = 200) -> str | None:
    return None if obj.get(key) is None else _text(obj, key, limit=limit)


def checked_imports(obj: dict[str, Any]) -> ImportFacts:
    """An import X-ray (the ``imports`` event's fields, or a stored one) with every figure
    checked and every text capped; unknown keys are dropped. Raises ValueError if malformed."""
    try:
        return ImportFacts.of(_imports(obj))
    except _Malformed as exc:
        raise ValueError(f"imports: {exc} is missing or out of range") from None


def _imports(obj: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _Malformed("imports")
    compiled = obj.get("compiled", {})
    keras = obj.get("keras", {})
    if not isinstance(compiled, dict) or not isinstance(keras, dict):
        raise _Malformed("imports")
    return {
        "method": _optional_text(obj, "method", 40),
        "total": _number(obj, "total"),
        "modules": _count(obj, "modules"),
        "native": _number(obj, "native"),
        "native_share": _number(obj, "native_share", high=1.0),
        "groups": _import_rows(obj, "groups", ("self", "cumulative")),
        "packages": _import_rows(obj, "packages", ("self",)),
        "compiled": {str(name)[:200]: {**{k: _count(c, k) for k in ("modules", "checked", "written", "uncached")},
                                      "folder": _text(c, "folder", "")}
                     for name, c in list(compiled.items())[:8] if isinstance(c, dict)},
        "read_bytes": _optional_count(obj, "read_bytes", MAX_BYTES),
        "onednn": _optional_text(obj, "onednn", 40),
        "keras": {k: _optional_text(keras, k, 40) for k in ("keras", "tf_keras")},
    }


def _progress(ts: float, phase: str, done: int, total: int) -> Progress:
    if done > total:
        raise _Malformed("done")
    return Progress(ts, phase, done, total)


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
            phase = _name(obj, "phase")
            return _BUILDERS[kind](obj, _number(obj, "ts", *EPOCH_RANGE), phase)
        # OverflowError: a whole number too large for a float (a 400-digit "window") fails
        # math.isfinite before any range check can refuse it.
        except (_Malformed, TypeError, ValueError, OverflowError):
            self.malformed += 1
            return None
