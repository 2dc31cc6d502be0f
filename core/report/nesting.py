"""Which of a program's phases ran inside another: the launch hook reports phases as they
start and end, and a program's phases overlap (TensorFlow's devices start inside the first
Keras layer's build; the first batch of data is read inside the first step). A table that
lists them in time order indents each under the phase it ran inside."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..phases import SPAWN

if TYPE_CHECKING:
    from ..run.record import RunRecord

# Clocks of a start and an end reported a few microseconds apart are the same instant.
_SAME_INSTANT_S = 1e-4


def parents(record: RunRecord, now: float | None = None) -> dict[str, str]:
    """{phase: the innermost earlier phase whose interval holds it}, for the phases that
    ran inside another; a running phase holds whatever started after it."""
    spans: list[tuple[str, float, float | None]] = []
    for name in record.phase_order:
        phase = record.phases[name]
        if phase.started is None or name == SPAWN:
            continue
        end = phase.started + phase.duration if phase.duration is not None else None
        spans.append((name, phase.started, end))
    found: dict[str, str] = {}
    for i, (name, start, end) in enumerate(spans):
        own_end = end if end is not None else (now if now is not None else start)
        for outer, outer_start, outer_end in reversed(spans[:i]):
            if outer_start <= start + _SAME_INSTANT_S and (outer_end is None
                                                           or outer_end + _SAME_INSTANT_S >= own_end) \
                    and (outer_end is None or outer_end - _SAME_INSTANT_S > start):
                found[name] = outer
                break
    return found


def depth(name: str, found: dict[str, str]) -> int:
    """How many phases `name` ran inside."""
    level, seen = 0, {name}
    while name in found and found[name] not in seen:
        name = found[name]
        seen.add(name)
        level += 1
    return level
