"""The fault matrix that already held, kept green: crashes by signal in every phase, hangs,
garbage on stdout, silent exits, cancels and bad arguments, in the CLI and the app.

Every case asserts the line the user sees last, that no process of the run is left, and
that the runs stored before it are intact. The children are fake (tests/fake_child.py):
each fault costs a second, not a TensorFlow start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid

import pytest

from tflaunch.core.paths import history_path
from tflaunch.core.phases import PHASES, label
from tflaunch.core.run.record import RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History

from ..builders import TFLAUNCH, fake_python, finished_record, tflaunch
from ..fake_child import CHILD_ENV, MARKER_ENV
from .children import assert_nothing_left, left_running

SIGNALS = ("SIGKILL", "SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE", "SIGTERM")


@pytest.fixture
def fake(tmp_path):
    return fake_python(tmp_path)


@pytest.fixture
def earlier_run():
    """A run stored before the fault: it must come through untouched."""
    history = History(history_path())
    run_id = history.record(finished_record(), "cli")
    before = history.load(run_id).to_dict()
    history.close()
    yield
    history = History(history_path())
    assert history.load(run_id).to_dict() == before
    history.close()


def bench(fake: str, mode: str, *extra: str) -> tuple[subprocess.CompletedProcess, str]:
    marker = uuid.uuid4().hex
    result = tflaunch("bench", "--model", "sample:mlp", "--python", fake, "--env", f"{CHILD_ENV}={mode}",
                      "--env", f"{MARKER_ENV}={marker}", *extra, timeout=60)
    return result, marker


@pytest.mark.parametrize("phase, signal_name", list(zip(PHASES, SIGNALS, strict=True)))
def test_a_crash_by_signal_in_any_phase_names_the_phase_and_the_signal(fake, earlier_run, phase, signal_name):
    result, marker = bench(fake, f"crash:{phase}:{signal_name}")
    last = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert last.startswith("tflaunch: Failed in ") and f"{signal_name} during phase {label(phase)}" in last, last
    assert_nothing_left(marker)
    [stored] = [s for s in History(history_path()).list_runs() if s.status != "ok"]
    assert stored.status == "failed" and stored.failed_phase == phase


def test_garbage_on_stdout_is_skipped_and_counted(fake, earlier_run):
    result, marker = bench(fake, "garbage", "--json")
    assert result.returncode == 0, result.stderr
    assert '"malformed_lines": 4' in result.stdout
    assert_nothing_left(marker)


def test_a_silent_exit_is_a_failure_in_its_phase(fake, earlier_run):
    result, marker = bench(fake, "exit0")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "tflaunch: Failed in Load: The probe process exited before reporting a result during phase Load.")


def test_a_hang_times_out_and_takes_its_helpers_with_it(fake, earlier_run):
    started = time.monotonic()
    result, marker = bench(fake, "hang", "--timeout", "2")
    assert time.monotonic() - started < 30
    assert result.returncode == 1 and "timed out" in result.stderr.strip().splitlines()[-1].lower()
    assert_nothing_left(marker)  # the helper the child started too


def test_ctrl_c_cancels_the_run_and_leaves_nothing(fake, earlier_run):
    marker = uuid.uuid4().hex
    # SIGINT as a terminal sends it: a test run in the background (no job control) inherits
    # it ignored, and Python then never turns it into KeyboardInterrupt.
    cli = subprocess.Popen([*TFLAUNCH, "bench", "--model", "sample:mlp", "--python", fake, "--env",
                            f"{CHILD_ENV}=hang", "--env", f"{MARKER_ENV}={marker}"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 30
        while len(left_running(marker)) < 3 and time.monotonic() < deadline:  # the CLI, child and helper
            time.sleep(0.1)
        cli.send_signal(signal.SIGINT)
        _out, err = cli.communicate(timeout=30)
    finally:
        cli.kill()
    assert cli.returncode == 130, err
    assert "tflaunch: Cancelled during Load" in err and "Traceback" not in err
    assert_nothing_left(marker)
    [stored] = [s for s in History(history_path()).list_runs() if s.status != "ok"]
    assert stored.status == "cancelled"


@pytest.mark.parametrize("args, named", [
    (["--intra", "lots"], "--intra"), (["--timeout", "nan"], "--timeout"), (["--timeout", "-1"], "--timeout"),
    (["--gpus", "a,b"], "--gpus"), (["--batch", "0"], "--batch"), (["--input", "x=3xq"], "--input"),
    (["--log-level", "9"], "--log-level"), (["--env", "NOEQUALS"], "--env"),
])
def test_bad_arguments_are_named_and_nothing_starts(args, named):
    result = tflaunch("bench", "--model", "sample:mlp", *args, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert named in result.stderr.strip().splitlines()[-1], result.stderr
    assert not History(history_path()).list_runs(), "nothing ran, nothing stored"


@pytest.mark.parametrize("mode, status, phase", [
    ("crash:load:SIGSEGV", RunStatus.FAILED, "load"), ("fail", RunStatus.FAILED, "load"),
    ("garbage", RunStatus.OK, None), ("error", RunStatus.FAILED, "trace"),
])
def test_the_app_ends_every_fault_and_stays_usable(qtbot, window, fake, mode, status, phase):
    marker = uuid.uuid4().hex
    window.use_config(LaunchConfig(python=fake, extra_env={CHILD_ENV: mode, MARKER_ENV: marker}, timeout=30))
    with qtbot.waitSignal(window.run_finished, timeout=30_000) as finished:
        window.start_run()
    record = finished.args[0]
    assert record.status is status and record.failed_phase == phase
    assert window.run_action.isEnabled() and not window.running
    assert_nothing_left(marker)
    if status is RunStatus.FAILED:
        assert label(phase) in window.statusBar().currentMessage() or label(phase) in record.headline


def test_the_app_cancels_a_hang_and_times_out_the_next(qtbot, window, fake):
    marker = uuid.uuid4().hex
    window.use_config(LaunchConfig(python=fake, extra_env={CHILD_ENV: "hang", MARKER_ENV: marker}, timeout=30))
    with qtbot.waitSignal(window.run_finished, timeout=30_000) as finished:
        window.start_run()
        qtbot.waitUntil(lambda: len(left_running(marker)) >= 2, timeout=20_000)
        window.cancel_action.trigger()
    assert finished.args[0].status is RunStatus.CANCELLED
    assert_nothing_left(marker)
    window.use_config(LaunchConfig(python=fake, extra_env={CHILD_ENV: "hang", MARKER_ENV: marker}, timeout=1.5))
    with qtbot.waitSignal(window.run_finished, timeout=30_000) as finished:
        window.start_run()
    assert finished.args[0].status is RunStatus.TIMED_OUT
    assert_nothing_left(marker)
    assert os.environ.get(CHILD_ENV) is None, "the fault's variable stayed in the child"
