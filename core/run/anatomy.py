"""The anatomy of a first step or first call, as core keeps it: checked where it enters, labelled.

The child's probe/anatomy.py reads TensorFlow's trace of an extra, profiled run and sends an
``anatomy`` event: the window (the phase's duration in that run), its parts (each with the
event names that made it) and what no rule named ("not attributed"). Everything here is
checked as every figure from a child is (finite, in range, capped), and the parts must add
up to no more than the window: a child cannot make a view show more time than there was.
"""

from __future__ import annotations

import math
from typing import Any

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


def _names(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise ValueError("anatomy: names is not a list")
    return [{"name": str(item.get("name", ""))[:200], "seconds": _seconds(item, "seconds")}
            for item in raw[:MAX_NAMES] if isinstance(item, dict)]


def checked_anatomy(obj: dict[str, Any]) -> dict[str, Any]:
    """An anatomy (the event's fields, or a stored one) with every figure checked and every
    text capped; unknown keys dropped. Raises ValueError if it is malformed."""
    if not isinstance(obj, dict):
        raise ValueError("anatomy: not an object")
    out: dict[str, Any] = {"window": _seconds(obj, "window")}
    for text_key in ("phase", "error", "thread"):
        if isinstance(obj.get(text_key), str):
            out[text_key] = obj[text_key][:500]
    if isinstance(obj.get("run_id"), int) and not isinstance(obj["run_id"], bool):
        out["run_id"] = obj["run_id"]
    if "error" in out:
        return out
    raw = obj.get("parts")
    if not isinstance(raw, list) or len(raw) > MAX_PARTS:
        raise ValueError("anatomy: parts is not a short list")
    parts: list[dict[str, Any]] = []
    for item in raw:
        key: Any = item.get("part") if isinstance(item, dict) else None
        if not isinstance(key, str) or not key or len(key) > 40 or not set(key) <= _KEY_CHARS:
            raise ValueError("anatomy: a part has no well-formed name")
        parts.append({"part": key, "seconds": _seconds(item, "seconds"), "names": _names(item.get("names", []))})
    out["parts"] = parts
    out["not_attributed"] = _seconds(obj, "not_attributed")
    out["unattributed_names"] = _names(obj.get("unattributed_names", []))
    if obj.get("trace_bytes") is not None:
        size = obj["trace_bytes"]
        if isinstance(size, int) and not isinstance(size, bool) and 0 <= size < 1 << 50:
            out["trace_bytes"] = size
    if sum(p["seconds"] for p in parts) > out["window"] + TOLERANCE_S:
        raise ValueError("anatomy: the parts add up to more than the window")
    return out


def part_label(key: str) -> str:
    return PART_LABELS.get(key, key.replace("_", " "))


_SHORT = {"variable initialisation": "variables", "GPU module loading and JIT": "GPU modules",
          "GPU allocator growth": "GPU allocator"}


def short_label(label: str) -> str:
    """A part's label without its explanation, for a narrow column: "tracing", "variables"."""
    head = label.split(" (")[0].replace(" and graph optimisation", "")
    return _SHORT.get(head, head)


def attributed_share(anatomy: dict[str, Any]) -> float | None:
    """How much of the window the parts name (0-1); None for an anatomy that failed."""
    window = anatomy.get("window") or 0.0
    if "parts" not in anatomy or window <= 0:
        return None
    named = math.fsum(float(p["seconds"]) for p in anatomy["parts"])
    return min(1.0, named / float(window))


def anatomy_rows(anatomy: dict[str, Any]) -> list[tuple[str, float, str]]:
    """(label, seconds, what made it) per part, then not attributed: the sub-rows of the
    phase in every view. Their seconds add up to the window."""
    rows = [(part_label(p["part"]), p["seconds"], ", ".join(n["name"] for n in p["names"][:3]))
            for p in anatomy.get("parts", [])]
    if "parts" in anatomy:
        rows.append((NOT_ATTRIBUTED_LABEL, anatomy.get("not_attributed", 0.0),
                     ", ".join(n["name"] for n in anatomy.get("unattributed_names", [])[:3])
                     or "Python between TensorFlow's calls"))
    return rows


def segments(anatomy: dict[str, Any]) -> list[tuple[str, float, str]]:
    """(label, seconds, colour) of each part then not attributed, for a bar split in parts."""
    out = [(part_label(p["part"]), p["seconds"], PART_COLORS.get(p["part"], OTHER_COLOR))
           for p in anatomy.get("parts", [])]
    if "parts" in anatomy:
        out.append((NOT_ATTRIBUTED_LABEL, anatomy.get("not_attributed", 0.0), OTHER_COLOR))
    return out


def source_line(anatomy: dict[str, Any], unprofiled: float | None = None) -> str:
    """Where the parts come from, in words: the profiled run, its window, the share named,
    and beside it the phase in runs without the profiler."""
    run = f"run #{anatomy['run_id']}" if anatomy.get("run_id") is not None else "an extra run"
    phase = anatomy.get("phase", "the phase")
    head = f"Anatomy of {phase} from {run} (TensorFlow's profiler on): {format_duration(anatomy['window'])}"
    if "error" in anatomy:
        return f"{head}; no parts: {anatomy['error']}"
    share = attributed_share(anatomy)
    head += f", {share:.0%} attributed" if share is not None else ""
    if unprofiled is not None:
        head += f"; without the profiler {format_duration(unprofiled)}"
    return head
