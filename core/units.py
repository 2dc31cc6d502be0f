"""Numbers as people read them: every duration and size with its unit."""

from __future__ import annotations

MIB = 1024 * 1024


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
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
    mib = size / MIB
    if mib >= 1024:
        return f"{mib / 1024:.2f} GiB"
    return f"{mib:.1f} MiB"
