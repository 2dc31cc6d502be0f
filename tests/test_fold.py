"""One fold for every subject (core/run/fold.py): where the ready point falls, and "other"
as what the union of the phases leaves of [0, ready], for a model as for a program."""

from __future__ import annotations

import pytest

from tflaunch.core.run import events as ev
from tflaunch.core.run import fold
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig

from .builders import finished_record


def test_the_ready_point_of_each_subject_and_until():
    assert fold.is_ready_point(False, "first_step", "end", "first"), "a model: its first inference, --until aside"
    assert not fold.is_ready_point(False, "exit", "exit") and not fold.is_ready_point(False, "mark:x", "mark", "x")
    assert fold.is_ready_point(True, "first_step", "end", "first_step")
    assert fold.is_ready_point(True, "first_inference", "end", "first")
    assert not fold.is_ready_point(True, "first_step", "end", "first")
    assert fold.is_ready_point(True, "mark:warm", "mark", "warm") and not fold.is_ready_point(True, "mark:warm", "end",
                                                                                                "warm")
    assert fold.is_ready_point(True, "exit", "exit") and not fold.is_ready_point(True, "first_step", "exit")


def test_a_models_other_time_is_the_union_rule_and_agrees_with_the_sum_of_its_sequential_phases():
    record = finished_record(ready_s=1.0)
    ready = record.time_to_ready
    spans = record.offsets()
    summed = ready - sum(d for name, (_, d) in spans.items() if name != "steady")
    assert record.other_time == pytest.approx(max(summed, 0.0), abs=2e-4)
    assert record.other_time == pytest.approx(sum(d for _, d in record.gaps()))


def test_a_model_phase_nested_in_another_counts_once():
    """Clocks of two processes can make spans overlap: the union never counts time twice
    (a sum went below zero and was clamped, hiding the real gap after)."""
    at = 100.0
    record = RunRecord(LaunchConfig(model="sample:mlp"), launched_at=at)
    record.apply(ev.Hello(at + 0.1, "spawn", 7, 0.1, "python"))
    record.apply(ev.PhaseEnd(at + 0.1, "spawn", 0.1, 1, 1))
    for name, start, end in (("import", 0.1, 1.0), ("devices", 0.5, 0.9), ("load", 1.0, 1.2), ("trace", 1.2, 1.3),
                             ("first", 1.4, 1.5)):  # 0.1 s between trace and first
        record.apply(ev.PhaseStart(at + start, name))
        record.apply(ev.PhaseEnd(at + end, name, end - start, 1, 1))
    assert record.time_to_ready == pytest.approx(1.5)
    assert record.other_time == pytest.approx(0.1), "the gap before first, once; nested devices counted once"


def test_until_exit_is_ready_at_a_clean_exit_only():
    for code, ready in ((0, True), (1, False)):
        record = RunRecord(LaunchConfig(program=("python", "x.py"), until="exit"), launched_at=100.0)
        record.apply(ev.Hello(100.05, "spawn", 7, 0.05, "python"))
        record.apply(ev.PhaseEnd(100.05, "spawn", 0.05, 1, 1))
        record.finish(code)
        assert (record.time_to_ready is not None) is ready, code


def _program_to_exit(retraces: tuple[float, float] | None = None) -> RunRecord:
    """The review's case: a 10 s program run to its exit, 3 s of it steady steps."""
    import time

    at = time.time() - 10
    record = RunRecord(LaunchConfig(program=("python", "t.py"), until="exit", steady=3), launched_at=at)
    record.apply(ev.Hello(at + 0.5, "spawn", 7, 0.5, "python"))
    record.apply(ev.PhaseEnd(at + 0.5, "spawn", 0.5, 1, 1))
    for name, start, end in (("import", 0.5, 2.0), ("first_step", 2.0, 3.0)):
        record.apply(ev.PhaseEnd(at + end, name, end - start, 1, 1, start=at + start))
    if retraces is not None:  # a count with its total time, sent when steady ends: no span of its own
        record.apply(ev.PhaseEnd(at + 6.0, "retraces", retraces[1], 1, 1, count=int(retraces[0])))
    record.apply(ev.PhaseEnd(at + 6.0, "steady", 3.0, 1, 1, latency={"n": 3, "median": 1.0}, start=at + 3.0))
    record.finish(0)
    return record


def test_until_exit_counts_the_steady_steps_as_a_phase_not_as_other():
    """`gaps` excluded steady by name: with --until exit, 7.0 s of a 10 s run (3.0 s of it
    steady) was "Other (between phases)"."""
    record = _program_to_exit()
    assert record.time_to_ready == pytest.approx(10.0, abs=0.5)
    assert record.other_time == pytest.approx(record.time_to_ready - 6.0, abs=1e-6)  # from the steady's end to exit
    assert [start for start, _ in record.gaps()] == [pytest.approx(6.0)]


def test_retraces_are_no_span_and_cover_no_other_time():
    """Retraces are a count and a total, their start invented (the end minus the time): the
    time they would cover is still "other" when no real phase covers it."""
    record = _program_to_exit(retraces=(2, 3.5))  # its invented span would cover 2.5-6.0
    assert record.other_time == pytest.approx(record.time_to_ready - 6.0, abs=1e-6)
    spans = {"spawn": (0.0, 0.5), "retraces": (0.5, 1.0)}
    assert fold.gaps(spans, 2.0) == [(pytest.approx(0.5), pytest.approx(1.5))]


def test_steady_after_the_ready_point_is_clipped_away():
    """Where steady runs after the ready point (a model, a program to its first step), the
    union clips it at ready: it covers nothing of the start."""
    spans = {"spawn": (0.0, 0.5), "first": (0.5, 0.5), "steady": (1.2, 3.0)}
    assert fold.gaps(spans, 1.0) == []


def test_a_comparison_of_runs_to_their_exit_stacks_their_steady_steps_up_to_ready() -> None:
    """The review's chart stacks Compare's time rows: with --until exit steady ran before the
    ready point, so it is a row, and the rows before Other with Other add up to ready."""
    from tflaunch.core.report.compare import time_rows

    record = _program_to_exit()
    rows = time_rows([record])
    assert "steady" in rows and rows[-2:] == ("other", "ready")
    stacked = sum(record.phases[n].duration or 0.0 for n in rows[:-2]) + record.other_time
    assert stacked == pytest.approx(record.time_to_ready, abs=0.01)
    record = RunRecord(LaunchConfig(program=("python", "x.py")), launched_at=100.0)
    assert "steady" not in time_rows([record]), "to a first step, steady comes after ready"
