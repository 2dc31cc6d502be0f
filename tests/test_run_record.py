"""RunRecord's bookkeeping: phases, status and failure messages, without a process."""

from __future__ import annotations

import signal

import pytest

from tflaunch.core.run import events as ev
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.model_facts import ModelFacts
from tflaunch.core.run.record import PhaseState, RunRecord, RunStatus
from tflaunch.core.settings.config import LaunchConfig

from .builders import record_through


def test_a_full_run_is_ok_with_time_to_ready_through_first():
    record = record_through(["import", "devices", "load", "trace", "first", "steady"])
    record.apply(ev.Result(0, "steady", EnvironmentFacts({"tensorflow": "2.21"}), ModelFacts({"params": 1})))
    record.finish(0)
    assert record.status is RunStatus.OK
    assert record.time_to_ready == pytest.approx(0.05 + 5.0)
    start, duration = record.offsets()["import"]
    assert abs(start - 0.05) < 1e-9 and duration == 1.0
    assert record.headline == "Ready in 5.05 s"


def test_killed_mid_phase_names_the_phase_and_signal():
    record = record_through(["import"])
    record.apply(ev.PhaseStart(0, "devices"))
    record.add_stderr("fatal: out of memory")
    record.finish(None, signal.SIGKILL)
    assert record.status is RunStatus.FAILED and record.failed_phase == "devices"
    assert record.phases["devices"].state is PhaseState.FAILED
    assert "SIGKILL" in record.failure.message and "Devices" in record.failure.message
    assert "out of memory" in record.failure.detail


def test_exit_between_phases_blames_the_next_phase():
    record = record_through(["import", "devices"])
    record.finish(7)
    assert record.failed_phase == "load" and "code 7" in record.failure.message


def test_probe_error_wins_over_exit_code():
    record = record_through(["import", "devices"])
    record.apply(ev.ProbeError(0, "load", "model_not_found", "The model x does not exist."))
    record.finish(2)
    assert record.failed_phase == "load" and record.failure.kind == "model_not_found"
    assert record.headline == "Failed in Load: The model x does not exist."


def test_cancel_and_timeout():
    cancelled = record_through(["import"])
    cancelled.finish(None, signal.SIGKILL, cancelled=True)
    assert cancelled.status is RunStatus.CANCELLED
    # Cancelled between import and devices: in devices, which it never reached (so no row).
    assert cancelled.failed_phase == "devices" and list(cancelled.phases) == ["spawn", "import"]
    assert cancelled.status_line == "Cancelled during Devices"
    timed_out = record_through([])
    timed_out.apply(ev.PhaseStart(0, "import"))
    timed_out.finish(None, signal.SIGKILL, timed_out=True)
    assert timed_out.status is RunStatus.TIMED_OUT and "timeout" in timed_out.failure.message


def test_clean_exit_without_result_is_a_failure():
    record = record_through(["import", "devices", "load", "trace", "first", "steady"])
    record.finish(0)
    assert record.status is RunStatus.FAILED and "before reporting a result" in record.failure.message


def test_spawn_cannot_start_before_launch():
    """The OS's start time ticks at 10 ms; a reading before our launch is clamped."""
    record = RunRecord(LaunchConfig(), launched_at=100.0)
    record.apply(ev.Hello(100.020, "spawn", 42, 0.030, "python"))
    record.apply(ev.PhaseEnd(100.020, "spawn", 0.030, 1, 1))
    assert record.phases["spawn"].duration == pytest.approx(0.020)
    assert record.offsets()["spawn"][0] == pytest.approx(0.0)


def test_a_failed_model_run_stores_and_exports_only_the_phases_it_reached():
    """Issue 35: a model's phases were pre-filled "waiting" and stored and exported so."""
    from tflaunch.core.run.record_json import record_dict
    from tflaunch.core.store.run_rows import record_from_data, run_data

    record = record_through(["import", "devices"])
    record.apply(ev.PhaseStart(103.05, "load"))
    record.finish(1)
    assert record.status is RunStatus.FAILED and record.failed_phase == "load"
    assert list(record.phases) == ["spawn", "import", "devices", "load"]
    assert list(record_dict(record)["phases"]) == ["spawn", "import", "devices", "load"]
    assert [row[0] for row in run_data(record, "cli", None)["phases"]] == ["spawn", "import", "devices", "load"]
    back, _ = record_from_data(run_data(record, "cli", None))
    assert list(back.phases) == list(record.phases) and back.phases["load"].state is PhaseState.FAILED


def test_an_old_row_with_pre_filled_waiting_phases_reads_as_the_phases_reached():
    from tflaunch.core.store.run_rows import record_from_data, run_data

    data = run_data(record_through(["import"]), "cli", None)
    seq = len(data["phases"])
    data["phases"] += [[name, "waiting", None, None, None, None, "{}", "{}", seq + i, "{}"]
                       for i, name in enumerate(("devices", "load", "trace", "first", "steady"))]
    back, _ = record_from_data(data)
    assert list(back.phases) == ["spawn", "import"]
