"""What a phase read from storage, in words: "412.0 MiB read, 310.2 MiB/s", or that the page
cache served it all.

The probe reads its own /proc/self/io at each phase's start and end, so a model run's
figures are exact for its process. A program's phases are observed after the fact (the
launch hook learns a phase ended, not when its reads began), so a program shows none.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median
from typing import TYPE_CHECKING

from ..units import MIB, format_bytes

if TYPE_CHECKING:
    from .record import PhaseRecord, RunRecord

# Below these a rate says nothing (a few pages, a phase of a few milliseconds).
RATE_FROM_BYTES = MIB
RATE_FROM_S = 0.01
CACHED = "0 B from storage (page cache)"
CACHED_CELL = "0 B (page cache)"  # under a "Read from storage" heading


def amount(size: float) -> str:
    return f"{size / 1024:.0f} KiB" if size < MIB else format_bytes(size)


def reads_text(read_bytes: float | None, seconds: float | None) -> str:
    """A phase's reads, with the rate where there is enough to make one (a table's cell)."""
    if read_bytes is None:
        return "–"
    if read_bytes == 0:
        return CACHED_CELL
    text = f"{amount(read_bytes)} read"
    if read_bytes >= RATE_FROM_BYTES and seconds is not None and seconds >= RATE_FROM_S:
        text += f", {amount(read_bytes / seconds)}/s"
    return text


def phase_reads(phase: PhaseRecord | None) -> str:
    return "–" if phase is None else reads_text(phase.read_bytes, phase.duration)


def median_reads(records: Sequence[RunRecord], name: str) -> str:
    """The median of a phase's reads (and of its duration, for the rate) over runs."""
    phases = [p for p in (r.phase(name) for r in records) if p is not None and p.read_bytes is not None]
    if not phases:
        return "–"
    durations = [p.duration for p in phases if p.duration is not None]
    return reads_text(median(p.read_bytes or 0 for p in phases), median(durations) if durations else None)


def reads_line(record: RunRecord) -> str | None:
    """"Read from storage: import 512.0 MiB, load 412.0 MiB (310.2 MiB/s) …" for the phases that
    read anything; None when nothing was measured."""
    measured = [(name, p) for name, p in record.phases.items() if p.read_bytes is not None]
    if not measured:
        return None
    total = sum(p.read_bytes or 0 for _, p in measured)
    if total == 0:
        return f"Read from storage: {CACHED}: every file the child read was in memory."
    parts = [f"{name} {phase_reads(p).removesuffix(' read')}" for name, p in measured if p.read_bytes]
    return f"Read from storage: {amount(total)} in all: " + "; ".join(parts)
