"""The run history's rows, checked both ways: values made storable on the way in, and
every value read back checked before it becomes a record.

A file can hold what tflaunch never wrote (another program, a bad disk, an old bug), and
one such row must not hide the others: it is listed as damaged, with the reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..phases import NAME
from ..run.events import checked_imports
from ..run.record import Failure, PhaseRecord, PhaseState, RunRecord, RunStatus
from ..settings.config import LaunchConfig
from ..settings.vocabulary import LOG_LEVELS

INT64 = (-(1 << 63), (1 << 63) - 1)  # what an SQLite INTEGER holds
STDERR_STORED_BYTES = 64 * 1024  # per run: the end of the output, which says why a run ended
DAMAGED = "damaged"  # the status a summary shows for a row that cannot be read


class DamagedRowError(ValueError):
    """A stored value tflaunch could not have written; the message says which."""


@dataclass(frozen=True)
class RunSummary:
    """One row of the history list, without samples."""

    id: int
    launched_at: float
    source: str
    model: str
    status: str  # a RunStatus value, or DAMAGED
    failed_phase: str | None
    time_to_ready: float | None
    peak_rss: int | None
    settings_summary: str
    assumed_inputs: bool = False  # a default filled an input shape: the figures are tflaunch's guess
    damage: str = ""  # why a damaged row cannot be read
    outputs_not_finite: bool = False  # ready, but the first inference gave NaN or Inf


# -- writing -------------------------------------------------------------------------------
def storable_int(value: Any) -> int | None:
    """An integer SQLite can hold, else None (a figure out of range is not a figure)."""
    if isinstance(value, int) and not isinstance(value, bool) and INT64[0] <= value <= INT64[1]:
        return value
    return None


def storable_real(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    return None


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def storable_json(value: Any, empty: str = "{}") -> str:
    """Strict JSON (no NaN or Infinity, which other readers refuse); `empty` if it has none."""
    try:
        return json.dumps(_finite(value), allow_nan=False, default=str)
    except (ValueError, TypeError, RecursionError):
        return empty


def storable_text(text: str, cap: int = STDERR_STORED_BYTES) -> str:
    """At most `cap` bytes of UTF-8: the end of the text, after a line saying what was dropped."""
    data = text.encode("utf-8", "replace")  # a lone surrogate cannot be stored as TEXT
    if len(data) <= cap:
        return data.decode("utf-8")
    tail = data[-(cap - 100):]
    cut = tail.find(b"\n")
    if 0 <= cut < len(tail) - 1:
        tail = tail[cut + 1:]  # start on a whole line
    dropped = len(data) - len(tail)
    return f"[… {dropped} earlier bytes of output not stored …]\n" + tail.decode("utf-8", "ignore")


def storable_samples(samples: Iterable[tuple[float, int]]) -> list[tuple[float, int]]:
    """Samples with a finite time and a storable size; any other is not a measurement."""
    out = []
    for t, rss in samples:
        at, size = storable_real(t), storable_int(rss)
        if at is not None and size is not None:
            out.append((at, size))
    return out


MAX_GPU_INDEX = 63  # NVML numbers a machine's GPUs from 0; no machine has more
MAX_GPU_BYTES = 1 << 50  # 1 PiB: more than any card holds, so a larger figure is damage


def storable_gpu_samples(samples: Iterable[tuple[float, dict[int, int]]]) -> list[tuple[float, int, int]]:
    """(t, gpu, bytes) rows of GPU samples, each a figure one card could hold at a finite time."""
    out = []
    for t, used in samples:
        at = storable_real(t)
        if at is None:
            continue
        for gpu, size in used.items():
            if _gpu_row(gpu, size):
                out.append((at, gpu, size))
    return out


def _gpu_row(gpu: Any, size: Any) -> bool:
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (gpu, size))
    return whole and 0 <= gpu <= MAX_GPU_INDEX and 0 <= size <= MAX_GPU_BYTES


def gpu_samples_from_rows(rows: Iterable[Sequence[Any]]) -> list[tuple[float, dict[int, int]]]:
    """Stored (t, gpu, bytes) rows, ordered by t, as a record's GPU samples; a damaged row
    (a time that is no finite number, a GPU or a size no card has) is skipped: it loses
    one point of a curve, not the run."""
    samples: list[tuple[float, dict[int, int]]] = []
    for t, gpu, size in rows:
        at = storable_real(t)
        if at is None or not _gpu_row(gpu, size):
            continue
        if samples and samples[-1][0] == at:
            samples[-1][1][gpu] = size
        else:
            samples.append((at, {gpu: size}))
    return samples


# -- reading -------------------------------------------------------------------------------
def _real(value: Any, name: str, optional: bool = True) -> float | None:
    if value is None and optional:
        return None
    number = storable_real(value)
    if number is None:
        raise DamagedRowError(f"{name} is {value!r}, not a finite number")
    return number


def _int(value: Any, name: str, low: int = INT64[0], high: int = INT64[1], optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DamagedRowError(f"{name} is {value!r}, not a whole number from {low} to {high}")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise DamagedRowError(f"{name} is {value!r}, not text")
    return value


def _choice(value: Any, name: str, allowed: Iterable[str]) -> str:
    if value not in tuple(allowed):
        raise DamagedRowError(f"{name} is {value!r}, which tflaunch does not know")
    return str(value)


def _refuse_constant(name: str) -> Any:
    def refuse(constant: str) -> Any:
        raise DamagedRowError(f"{name} holds {constant}")
    return refuse


def _finite_float(name: str) -> Any:
    def parse(text: str) -> float:
        number = float(text)
        if not math.isfinite(number):  # 1e400
            raise DamagedRowError(f"{name} holds {text}")
        return number
    return parse


def parsed_json(text: Any, name: str, kind: type = dict) -> Any:
    """A stored JSON value of the given kind, with no NaN or Infinity in it."""
    if text is None or text == "":
        return kind()
    if not isinstance(text, (str, bytes)):
        raise DamagedRowError(f"{name} is {text!r}, not JSON")
    try:
        value = json.loads(text, parse_constant=_refuse_constant(name), parse_float=_finite_float(name))
    except DamagedRowError:
        raise
    except (ValueError, RecursionError) as exc:
        raise DamagedRowError(f"{name} is not valid JSON ({exc})") from None
    if not isinstance(value, kind):
        raise DamagedRowError(f"{name} is {type(value).__name__}, not {kind.__name__}")
    return value


_BOOLS = ("xla_auto", "jit_compile", "memory_growth", "unsafe_deserialization")
# Wide bounds: what no run could have had, not what the launch check allows today (a limit
# it tightens must not turn older runs into damaged ones).
_COUNTS = {"intra": (0, 1 << 31), "inter": (0, 1 << 31), "batch": (0, 1 << 40), "steady": (0, 1 << 40)}


def stored_config(text: Any) -> LaunchConfig:
    """The LaunchConfig of a row, every field of the type a run could have had."""
    data = parsed_json(text, "config")
    try:
        config = LaunchConfig.from_dict(data)
    except (TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        raise DamagedRowError(f"config cannot be read ({exc})") from None
    for name in ("model", "python", "signature"):
        _text(getattr(config, name), f"config {name}")
    for name in _BOOLS:
        if not isinstance(getattr(config, name), bool):
            raise DamagedRowError(f"config {name} is {getattr(config, name)!r}, not on or off")
    for name, (low, high) in _COUNTS.items():
        _int(getattr(config, name), f"config {name}", low, high)
    if config.onednn is not None and not isinstance(config.onednn, bool):
        raise DamagedRowError(f"config onednn is {config.onednn!r}, not on or off")
    if config.log_level is not None and (not isinstance(config.log_level, int) or isinstance(config.log_level, bool)
                                         or config.log_level not in LOG_LEVELS):
        raise DamagedRowError(f"config log_level is {config.log_level!r}")
    for gpu in config.visible_gpus or ():
        _int(gpu, "config visible_gpus", 0, 1 << 16)
    _int(config.memory_limit_mb, "config memory_limit_mb", 0, 1 << 40)
    timeout = _real(config.timeout, "config timeout", optional=False)
    if timeout is None or timeout <= 0:
        raise DamagedRowError(f"config timeout is {config.timeout!r}")
    return config


def _marks(model_info: dict[str, Any]) -> tuple[bool, str, bool]:
    """(assumed_inputs, damage, outputs_not_finite) of a stored run's model facts."""
    inputs = model_info.get("inputs") or []
    assumed = isinstance(inputs, list) and any(isinstance(i, dict) and i.get("assumed") for i in inputs)
    return assumed, "", model_info.get("outputs_finite") is False


def summary_from_row(row: Sequence[Any]) -> RunSummary:
    """(id, launched_at, source, model, status, failed_phase, time_to_ready, peak_rss, config,
    model_info) as a summary; a damaged one when any of them is not what tflaunch writes."""
    run_id, launched_at, source, model, status, failed_phase, ready, peak, config, model_info = row
    try:
        return RunSummary(
            run_id, _real(launched_at, "launched_at", optional=False) or 0.0, _text(source, "source"),
            _text(model, "model"), _choice(status, "status", (s.value for s in RunStatus)),
            None if failed_phase is None else _phase_name(failed_phase, "failed_phase"),
            _nonnegative(ready, "time_to_ready"), _int(peak, "peak_rss", 0),
            stored_config(config).summary(), *_marks(parsed_json(model_info, "model_info")))
    except DamagedRowError as exc:
        return RunSummary(run_id, storable_real(launched_at) or 0.0, source if isinstance(source, str) else "?",
                          model if isinstance(model, str) else "?", DAMAGED, None, None, None, "",
                          damage=str(exc))


def _nonnegative(value: Any, name: str) -> float | None:
    number = _real(value, name)
    if number is not None and number < 0:
        raise DamagedRowError(f"{name} is {value!r}, below zero")
    return number


def _failure(text: Any) -> Failure | None:
    if not text:
        return None
    data = parsed_json(text, "failure")
    return Failure(_text(data.get("kind"), "failure kind"), _text(data.get("message"), "failure message"),
                   _text(data.get("detail", ""), "failure detail"))


def _latency(text: Any) -> dict[str, float]:
    latency: dict[str, float] = parsed_json(text, "latency")
    for key, value in latency.items():
        if key == "n":
            _int(value, "latency n", 0)
        else:
            _real(value, f"latency {key}")  # None: a figure the child sent out of range
    return latency


def _parts(text: Any) -> dict[str, float]:
    """A phase's parts (seconds by name); a damaged value loses the parts, not the run."""
    try:
        parts = parsed_json(text, "parts")
    except DamagedRowError:
        return {}
    return {str(k): float(v) for k, v in parts.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0}


def _imports(text: Any) -> dict[str, Any]:
    """A run's import X-ray, checked as the probe's event is; a damaged one loses the
    X-ray, not the run."""
    try:
        return checked_imports(parsed_json(text, "imports")) if text and text != "{}" else {}
    except (DamagedRowError, ValueError):
        return {}


def record_from_rows(data: dict[str, Any], phases: Iterable[Sequence[Any]],
                     samples: Iterable[Sequence[Any]]) -> RunRecord:
    """A stored run (its runs row by column name, its phases and samples) as a record."""
    command = parsed_json(data.get("command"), "command", list) if data.get("command") else None
    if command is not None and not all(isinstance(part, str) for part in command):
        raise DamagedRowError("command holds something other than text")
    launched_at = _real(data["launched_at"], "launched_at", optional=False)
    assert launched_at is not None  # optional=False
    _text(data["source"], "source"), _text(data["model"], "model"), _int(data["peak_rss"], "peak_rss", 0)
    record = RunRecord(stored_config(data["config"]), launched_at=launched_at, command=command)
    record.status = RunStatus(_choice(data["status"], "status", (s.value for s in RunStatus)))
    record.finished_at = _real(data["finished_at"], "finished_at")
    record.failed_phase = None if data["failed_phase"] is None else _phase_name(data["failed_phase"], "failed_phase")
    record.marks = _stored_marks(data.get("marks"))
    record.stopped_at_ready = bool(data.get("stopped_at_ready"))
    record.settings = parsed_json(data["settings"], "settings")
    record.environment = parsed_json(data["environment"], "environment")
    record.model = parsed_json(data["model_info"], "model_info")
    record.imports = _imports(data.get("imports"))
    ready = _nonnegative(data["time_to_ready"], "time_to_ready")
    if ready is not None:
        record.ready_at = launched_at + ready
    record.failure = _failure(data["failure"])
    record.exit_code, record.exit_signal = _int(data["exit_code"], "exit_code"), _int(data["exit_signal"],
                                                                                        "exit_signal")
    for line in _text(data["stderr_tail"], "stderr_tail").splitlines():
        record.add_stderr(line)  # capped as a live run's: a row from an older version may be huge
    if record.is_program:
        record.phases = {}  # a program's phases are the ones it reported, in their stored order
    for name, state, started, duration, rss, peak, latency, *rest in phases:
        name = _phase_name(name, "phase")
        extra = _extra(rest[1]) if len(rest) > 1 else {}
        record.phases[name] = PhaseRecord(
            name, PhaseState(_choice(state, f"{name} state", (s.value for s in PhaseState))),
            _real(started, f"{name} start"), _nonnegative(duration, f"{name} duration"),
            _int(rss, f"{name} rss", 0), _int(peak, f"{name} peak_rss", 0), _latency(latency),
            parts=_parts(rest[0]) if rest else {}, count=extra.get("count"))
    record.samples = []
    for t, rss in samples:
        at, size = _real(t, "sample time", optional=False), _int(rss, "sample rss", 0, optional=False)
        assert at is not None and size is not None  # neither is optional
        record.samples.append((at, size))
    return record


def _phase_name(value: Any, name: str) -> str:
    """A stored phase name: any well-formed one (the vocabulary is open); not one is damage."""
    if not isinstance(value, str) or not NAME.match(value):
        raise DamagedRowError(f"{name} is {value!r}, not a phase name")
    return value


def _extra(text: Any) -> dict[str, Any]:
    """A phase's further figures (a retrace count); a damaged value loses them, not the run."""
    try:
        extra = parsed_json(text, "extra")
    except DamagedRowError:
        return {}
    count = extra.get("count")
    return {"count": count} if isinstance(count, int) and not isinstance(count, bool) and 0 <= count < 1 << 31 else {}


def _stored_marks(text: Any) -> list[tuple[str, float]]:
    """A program's marks, (name, s since launch); damaged entries are skipped, not the run."""
    if not text:
        return []
    try:
        raw = parsed_json(text, "marks", list)
    except DamagedRowError:
        return []
    return [(item[0], float(item[1])) for item in raw[:1000]
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and NAME.match(item[0])
            and isinstance(item[1], (int, float)) and not isinstance(item[1], bool) and math.isfinite(item[1])
            and item[1] >= 0]


def stored_trial(text: Any) -> dict[str, Any]:
    """Which trial of a sweep a run was: candidate, warmup, number, instance."""
    trial: dict[str, Any] = parsed_json(text, "trial")
    _text(trial.get("candidate"), "trial candidate")
    if not isinstance(trial.get("warmup"), bool):
        raise DamagedRowError(f"trial warmup is {trial.get('warmup')!r}")
    _int(trial.get("number"), "trial number", 0, optional=False)
    _int(trial.get("instance", 0), "trial instance", 0)
    return trial
