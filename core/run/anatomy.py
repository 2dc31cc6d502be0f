"""The anatomy of a first step or first call, as core keeps it: checked where it enters, labelled.

The child's probe/anatomy.py reads TensorFlow's trace of an extra, profiled run and sends an
``anatomy`` event: the window (the phase's duration in that run), its parts (each with the
event names that made it) and what no rule named ("not attributed"). Everything here is
checked as every figure from a child is (finite, in range, capped), and the parts must add
up to no more than the window: a child cannot make a view show more time than there was.
What passes is an Anatomy, a frozen value the record keeps and every view reads by attribute,
whether it came from the event or from a history row: neither is read as a dict after this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from ..phases import label
from ..units import format_duration

# Labels of the parts the probe knows (probe/anatomy.PARTS), in its order; an unknown but
# well-formed key (a newer probe's) is data, shown by its key.
PART_LABELS: dict[str, str] = {
    "tracing": "tracing (graph building, autograph)",
    "instantiation": "instantiation and graph optimisation",
    "xla": "XLA compilation",
    "variables": "variable initialisation",
    "data": "data (iterator, first element)",
    "execution": "execution (kernels)",
    "gpu_handles": "GPU handles (cuBLAS, cuDNN, context)",
    "gpu_autotune": "GPU autotuning",
    "gpu_modules": "GPU module loading and JIT",
    "gpu_allocator": "GPU allocator growth",
    "gpu_copies": "host-device copies",
}
NOT_ATTRIBUTED_LABEL = "not attributed"
# Each part's colour in the waterfall and the review image (grey: not attributed, or a newer probe's part).
PART_COLORS: dict[str, str] = {
    "tracing": "#e8710a", "instantiation": "#f9ab00", "xla": "#a142f4", "variables": "#12b5cb",
    "data": "#1e8e3e", "execution": "#1a73e8", "gpu_handles": "#c5221f", "gpu_autotune": "#e52592",
    "gpu_modules": "#9334e6", "gpu_allocator": "#795548", "gpu_copies": "#5f6368",
}
OTHER_COLOR = "#bdc1c6"
MAX_PARTS = 24
MAX_NAMES = 8
MAX_SECONDS = 1e6
TOLERANCE_S = 0.002  # rounding of ns to s in the child: parts may exceed the window by this much
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def _seconds(obj: dict[str, Any], key: str) -> float:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= MAX_SECONDS:
        raise ValueError(f"anatomy: {key} is missing or out of range")
    return float(value)


@dataclass(frozen=True)
class EventTime:
    """One of TensorFlow's event names and its seconds in the window: what made a part."""

    name: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": self.seconds}


def _names(raw: Any) -> tuple[EventTime, ...]:
    if not isinstance(raw, list):
        raise ValueError("anatomy: names is not a list")
    return tuple(EventTime(str(item.get("name", ""))[:200], _seconds(item, "seconds"))
                 for item in raw[:MAX_NAMES] if isinstance(item, dict))


@dataclass(frozen=True)
class AnatomyPart:
    """A part of the window: its key (PART_LABELS', or a newer probe's), its seconds and the
    largest event names that made it."""

    key: str
    seconds: float
    names: tuple[EventTime, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.key, "seconds": self.seconds, "names": [n.to_dict() for n in self.names]}


@dataclass(frozen=True)
class Anatomy:
    """A profiled run's phase in parts, as checked_anatomy makes it. A run without one has
    None. One that failed has its reason in `error` and no parts; one that did not fail has
    its parts (maybe none, all its time not attributed)."""

    window: float  # the phase's duration in the profiled run
    phase: str | None = None
    error: str | None = None
    thread: str | None = None  # the thread the window was read on
    parts: tuple[AnatomyPart, ...] = ()
    not_attributed: float = 0.0
    unattributed_names: tuple[EventTime, ...] = ()
    trace_bytes: int | None = None  # the size of the profiler's trace
    run_id: int | None = None  # the history's id of the run it came from, for a view (tflaunch stores none)

    def of_run(self, run_id: int | None) -> Anatomy:
        """This anatomy naming the run it came from (the record's history id)."""
        return replace(self, run_id=run_id)

    def to_dict(self, run: bool = False) -> dict[str, Any]:
        """As the history keeps it, in checked_anatomy's order, which reads it back to this value;
        `run`: as the JSON gives it, with the run's id last (null where it has none), where the
        JSON has always added it to the stored anatomy."""
        out: dict[str, Any] = {"window": self.window}
        out.update((key, text) for key, text in (("phase", self.phase), ("error", self.error),
                                                  ("thread", self.thread)) if text is not None)
        if self.run_id is not None and not run:
            out["run_id"] = self.run_id
        if self.error is None:
            out.update(parts=[p.to_dict() for p in self.parts], not_attributed=self.not_attributed,
                       unattributed_names=[n.to_dict() for n in self.unattributed_names])
            if self.trace_bytes is not None:
                out["trace_bytes"] = self.trace_bytes
        if run:
            out["run_id"] = self.run_id
        return out


def _text(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value[:500] if isinstance(value, str) else None


def checked_anatomy(obj: Any) -> Anatomy:
    """An anatomy (the event's fields, or a stored one) with every figure checked and every
    text capped; unknown keys dropped. Raises ValueError if it is malformed."""
    if not isinstance(obj, dict):
        raise ValueError("anatomy: not an object")
    window = _seconds(obj, "window")
    phase, error, thread = _text(obj, "phase"), _text(obj, "error"), _text(obj, "thread")
    run_id = obj.get("run_id") if isinstance(obj.get("run_id"), int) and not isinstance(obj["run_id"], bool) else None
    if error is not None:
        return Anatomy(window, phase, error, thread, run_id=run_id)
    raw = obj.get("parts")
    if not isinstance(raw, list) or len(raw) > MAX_PARTS:
        raise ValueError("anatomy: parts is not a short list")
    parts: list[AnatomyPart] = []
    for item in raw:
        key: Any = item.get("part") if isinstance(item, dict) else None
        if not isinstance(key, str) or not key or len(key) > 40 or not set(key) <= _KEY_CHARS:
            raise ValueError("anatomy: a part has no well-formed name")
        parts.append(AnatomyPart(key, _seconds(item, "seconds"), _names(item.get("names", []))))
    not_attributed = _seconds(obj, "not_attributed")
    unattributed = _names(obj.get("unattributed_names", []))
    size = obj.get("trace_bytes")
    trace_bytes = size if isinstance(size, int) and not isinstance(size, bool) and 0 <= size < 1 << 50 else None
    if sum(p.seconds for p in parts) > window + TOLERANCE_S:
        raise ValueError("anatomy: the parts add up to more than the window")
    return Anatomy(window, phase, None, thread, tuple(parts), not_attributed, unattributed, trace_bytes, run_id)


def part_label(key: str) -> str:
    return PART_LABELS.get(key, key.replace("_", " "))


_SHORT = {"variable initialisation": "variables", "GPU module loading and JIT": "GPU modules",
          "GPU allocator growth": "GPU allocator"}


def short_label(label: str) -> str:
    """A part's label without its explanation, for a narrow column: "tracing", "variables"."""
    head = label.split(" (")[0].replace(" and graph optimisation", "")
    return _SHORT.get(head, head)


def attributed_share(anatomy: Anatomy) -> float | None:
    """How much of the window the parts name (0-1); None for an anatomy that failed."""
    if anatomy.error is not None or anatomy.window <= 0:
        return None
    return min(1.0, math.fsum(p.seconds for p in anatomy.parts) / anatomy.window)


def _made_of(names: tuple[EventTime, ...]) -> str:
    return ", ".join(n.name for n in names[:3])


def anatomy_rows(anatomy: Anatomy) -> list[tuple[str, float, str]]:
    """(label, seconds, what made it) per part, then not attributed: the sub-rows of the
    phase in every view. Their seconds add up to the window."""
    if anatomy.error is not None:
        return []
    return [*((part_label(p.key), p.seconds, _made_of(p.names)) for p in anatomy.parts),
            (NOT_ATTRIBUTED_LABEL, anatomy.not_attributed,
             _made_of(anatomy.unattributed_names) or "Python between TensorFlow's calls")]


def segments(anatomy: Anatomy) -> list[tuple[str, float, str]]:
    """(label, seconds, colour) of each part then not attributed, for a bar split in parts."""
    if anatomy.error is not None:
        return []
    return [*((part_label(p.key), p.seconds, PART_COLORS.get(p.key, OTHER_COLOR)) for p in anatomy.parts),
            (NOT_ATTRIBUTED_LABEL, anatomy.not_attributed, OTHER_COLOR)]


def source_line(anatomy: Anatomy, unprofiled: float | None = None) -> str:
    """Where the parts come from, in words: the profiled run, its window, the share named,
    and beside it the phase in runs without the profiler."""
    run = f"run #{anatomy.run_id}" if anatomy.run_id is not None else "an extra run"
    phase = label(anatomy.phase).lower() if anatomy.phase is not None else "phase"  # "first step", as read
    head = f"Anatomy of the {phase} from {run} (TensorFlow's profiler on): {format_duration(anatomy.window)}"
    if anatomy.error is not None:
        return f"{head}; no parts: {anatomy.error}"
    share = attributed_share(anatomy)
    head += f", {share:.0%} attributed" if share is not None else ""
    if unprofiled is not None:
        head += f"; without the profiler {format_duration(unprofiled)}"
    return head
