"""Values made storable on their way into the run history: a figure out of range becomes
NULL, JSON is strict, a flood of stderr is capped, so a record a run produced can always
be written. What comes back out is checked again (rows.py): a file can hold what tflaunch
never wrote.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

INT64 = (-(1 << 63), (1 << 63) - 1)  # what an SQLite INTEGER holds
STDERR_STORED_BYTES = 64 * 1024  # per run: the end of the output, which says why a run ended
MAX_GPU_INDEX = 63  # NVML numbers a machine's GPUs from 0; no machine has more
MAX_GPU_BYTES = 1 << 50  # 1 PiB: more than any card holds, so a larger figure is damage


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


def storable_gpu_samples(samples: Iterable[tuple[float, dict[int, int]]]) -> list[tuple[float, int, int]]:
    """(t, gpu, bytes) rows of GPU samples, each a figure one card could hold at a finite time."""
    out = []
    for t, used in samples:
        at = storable_real(t)
        if at is None:
            continue
        for gpu, size in used.items():
            if gpu_figure(gpu, size):
                out.append((at, gpu, size))
    return out


def gpu_figure(gpu: Any, size: Any) -> bool:
    """Whether (gpu, size) is a GPU index and a memory figure one card could have."""
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (gpu, size))
    return whole and 0 <= gpu <= MAX_GPU_INDEX and 0 <= size <= MAX_GPU_BYTES
