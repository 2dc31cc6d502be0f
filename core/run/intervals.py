"""Time covered by a run's phases, as intervals on the launch's clock.

A program's phases can overlap (`data` runs inside `first_step`; a mark's span inside
`load`), so "other" time is what the union of the intervals leaves of [0, ready], never
ready minus the sum of durations.
"""

from __future__ import annotations

from collections.abc import Iterable

_EPSILON = 1e-4  # below this, a stretch between phases is the clock's rounding


def union(spans: Iterable[tuple[float, float]], end: float) -> list[tuple[float, float]]:
    """The (start, stop) stretches the (start, duration) spans cover within [0, end], merged."""
    merged: list[tuple[float, float]] = []
    for start, duration in sorted(spans):
        lo, hi = max(start, 0.0), min(start + duration, end)
        if hi <= lo:
            continue
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def uncovered(spans: Iterable[tuple[float, float]], end: float) -> list[tuple[float, float]]:
    """(start, duration) of each stretch of [0, end] that no span covers."""
    out, at = [], 0.0
    for lo, hi in union(spans, end):
        if lo - at > _EPSILON:
            out.append((at, lo - at))
        at = max(at, hi)
    if end - at > _EPSILON:
        out.append((at, end - at))
    return out
