"""Numbers as people read them: every duration and size with its unit."""

from __future__ import annotations

import math

MIB = 1024 * 1024
INVALID = "invalid"
# Beyond these no figure is a measurement; a stored one (from a version that did not check
# what children sent) is shown as invalid rather than as 300 digits or a traceback.
_MAX_SECONDS = 1e9
_MAX_BYTES = 1 << 60


def _unusable(value: float, limit: float) -> bool:
    try:
        return not math.isfinite(value) or abs(value) > limit
    except (TypeError, OverflowError):  # not a number, or an int beyond a float
        return True


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if _unusable(seconds, _MAX_SECONDS):
        return INVALID
    # Choose the unit by the value as it will be printed: 0.09999 s is "100 ms", not "100.0 ms".
    us, ms = seconds * 1e6, seconds * 1e3
    if us < 999.5:
        return f"{us:.0f} µs"
    if ms < 99.95:
        return f"{ms:.1f} ms"
    if ms < 999.5:
        return f"{ms:.0f} ms"
    if seconds < 59.995:
        return f"{seconds:.2f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{int(minutes)} min {rest:.0f} s"


def format_bytes(size: float | None) -> str:
    if size is None:
        return "–"
    if _unusable(size, _MAX_BYTES):
        return INVALID
    mib = size / MIB
    if mib >= 1024:
        return f"{mib / 1024:.2f} GiB"
    return f"{mib:.1f} MiB"
