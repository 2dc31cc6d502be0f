"""The fold: where a run's ready point falls and what its "other" time is, one rule for
every subject (a model the probe calls, a program the launch hook observes).

The record (record.py) feeds every moment here as it arrives, and its figures come from
here only. The observer in the child keeps its own trigger for *when to stop* a program
(core/probe/observer/observe.py): it runs where tflaunch is not installed; it stops at the
moment this rule names, and the record's figure is this rule's, whatever the child did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from ..phases import NOT_SPANS
from ..subject import Subject
from .intervals import uncovered

Moment = Literal["end", "mark", "exit"]  # a phase's end, a program's mark, its exit


def ready_phase(program: bool, until: str) -> str | None:
    """The phase whose end is the ready point, as the subject says (Subject.ready_phase): a
    model's first inference; for a program, the phase --until names (None for mark:NAME and
    exit, which are no phase's end)."""
    return Subject.of(program).ready_phase(until)


def is_ready_point(program: bool, until: str, moment: Moment, name: str = "") -> bool:
    """Whether this moment is the run's ready point: the end of its ready phase, the mark
    --until names (mark:NAME), or a program's clean exit (--until exit). A model is ready
    when it has answered once; --until is a program's setting, a model has none."""
    if moment == "end":
        return name == ready_phase(program, until)
    if not program:
        return False
    if moment == "mark":
        return until == f"mark:{name}"
    return until == "exit"


def time_to_ready(ready_at: float | None, launched_at: float) -> float | None:
    """Wall time from launch to the ready point, by the clock both processes share: what a
    user with a stopwatch sees, work between phases included."""
    return None if ready_at is None else max(ready_at - launched_at, 0.0)


def gaps(spans: Mapping[str, tuple[float, float]], ready: float | None) -> list[tuple[float, float]]:
    """(start, duration) of each stretch of [0, ready] that no reported span covers: "other" time.

    The union of the phases' intervals, for every subject: a program's phases nest (`data`
    runs inside `first_step`, a mark's span inside `load`), so ready minus the sum of the
    durations would count nested time twice and can go below zero. A model's phases run
    one after another, where the union and the sum agree; one rule keeps a model and a
    program comparable row by row.

    The union stops at the ready point, so what runs after it (steady state, for a model or
    a program measured to its first step) covers nothing, with no name to exclude; where the
    ready point is the exit, steady steps are time the program reported, not "other". Only
    what is no span is left out (retraces: a count and its total, NOT_SPANS).
    """
    if ready is None:
        return []
    return uncovered([span for name, span in spans.items() if name not in NOT_SPANS], ready)


def other_time(spans: Mapping[str, tuple[float, float]], ready: float | None) -> float | None:
    """Time to ready spent outside any phase (generating inputs, Python between phases)."""
    return None if ready is None else sum(duration for _, duration in gaps(spans, ready))
