"""Numbers as people read them: every duration and size with its unit."""

from __future__ import annotations

MIB = 1024 * 1024


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 0.001:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms"
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)} min {rest:.0f} s"


def format_bytes(size: float | None) -> str:
    if size is None:
        return "–"
    mib = size / MIB
    if mib >= 1024:
        return f"{mib / 1024:.2f} GiB"
    return f"{mib:.1f} MiB"
