"""Children that are late: a timeout that hits after the phases it names ended, and events
written after the probe's result. Found from outside; each run here is a real child process
(a fake interpreter, children.py), driven by the command line's engine and, for late events,
by the app's as well.
"""

from __future__ import annotations

import json

import pytest

from tflaunch.core.cli.main import main as cli_main
from tflaunch.core.paths import history_path
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.gui.run.run_controller import RunController

from .children import assert_nothing_left, fake_python

HANG = "time.sleep(600)"
# A program that reaches its first step, then hangs in its steady steps. It reports through
# the observer the launch hook installed (as tflaunch_mark does): no TensorFlow needed.
PROGRAM_AT_READY_THEN_HANGS = """
import sys, time
observer = sys.modules["tflaunch_probe.observer.observe"].observer()
observer.send("phase_start", "first_step")
observer.span("first_step", time.time() - 0.01, time.time())
observer.send("phase_start", "steady")
time.sleep(600)
"""

# -- 1. a timeout names where the run really was ------------------------------------------

# name: (the fake child's script, its status line, words its failure must say)
TIMEOUTS = {
    "after its result": ("succeed()\n" + HANG, "Timed out after Steady state",
                         "reported every phase and its result but did not exit"),
    "before its result": ("start_until('')\n" + HANG, "Timed out after Steady state",
                          "ended its last phase (Steady state) but did not report its result"),
    "in steady state": ("start_until('steady')\n" + HANG, "Timed out in Steady state",
                        "while in phase Steady state"),
}
TIMEOUT_S = 1.5


@pytest.fixture(scope="module")
def timed_out(tmp_path_factory) -> dict[str, RunRecord]:
    """Every case's child started at once (one timeout's wait for all) and timed out."""
    folder = tmp_path_factory.mktemp("timeouts")
    sessions = {}
    for i, (name, (script, _, _)) in enumerate(TIMEOUTS.items()):
        python = fake_python(folder / str(i), script)
        sessions[name] = ProbeSession(LaunchConfig(model="sample:mlp", python=python, steady=3, timeout=TIMEOUT_S))
    program = folder / "program.py"
    program.write_text(PROGRAM_AT_READY_THEN_HANGS)
    sessions["program after ready"] = ProbeSession(LaunchConfig(
        program=("python", str(program)), workdir=str(folder), until="first_step", steady=5, timeout=TIMEOUT_S))
    records = dict(zip(sessions, run_sessions(list(sessions.values())), strict=True))
    for i in range(len(TIMEOUTS)):
        assert_nothing_left(str(folder / str(i)))
    return records


@pytest.mark.parametrize("case", TIMEOUTS)
def test_a_timeout_names_the_phase_it_hit_or_says_the_phases_had_ended(timed_out, case):
    record = timed_out[case]
    _, status_line, words = TIMEOUTS[case]
    assert record.status is RunStatus.TIMED_OUT
    assert record.status_line == status_line, record.headline
    assert record.failure is not None and words in record.failure.message, record.failure.message
    assert "Spawn" not in record.headline
    if case == "after its result":  # the figures are whole: the child only failed to exit
        assert record.time_to_ready is not None and record.failed_phase == "steady"
        assert "--timeout" in record.failure.message


def test_a_program_that_times_out_after_its_ready_point_says_it_got_there(timed_out):
    record = timed_out["program after ready"]
    assert record.status is RunStatus.TIMED_OUT and record.time_to_ready is not None
    assert record.status_line == "Timed out in Steady state", record.headline
    assert record.failure is not None
    message = record.failure.message
    assert "reached its first training step" in message and "before" not in message.split(",")[0], message
    assert "5 steady steps" in message and "--steady" in message, message


# -- 2. events after the probe's result: one rule, whichever driver reads them ---------------

LATE_ERROR = "emit('error', 'steady', kind='exception', message='fake: late error', detail='')"
LATE = {
    "an error": f"succeed()\n{LATE_ERROR}",
    "a phase again": "succeed()\nstart('load')\nend('load', 5.0)",
    # Written by a helper after the child exited: the CLI still reads it while it drains the
    # pipes, the app has ended the group by then. The rule must not depend on that timing.
    "an error from a helper after the exit": f"succeed()\nif os.fork() == 0:\n    time.sleep(0.2)\n    {LATE_ERROR}\n"
                                             "    os._exit(0)",
}


def run_in_app(qtbot, config: LaunchConfig) -> RunRecord:
    """One run through the app's drivers (RunController, ProbeProcess), stored as the app stores it."""
    controller = RunController(History(history_path()))
    with qtbot.waitSignal(controller.run_finished, timeout=30_000) as finished:
        controller.start(config)
    return finished.args[0]


@pytest.mark.parametrize("case", LATE)
def test_events_after_the_result_are_ignored_and_noted_alike_by_the_cli_and_the_app(qtbot, tmp_path, capsys, case):
    fake = fake_python(tmp_path, LATE[case])
    config = LaunchConfig(model="sample:mlp", python=fake, steady=3, timeout=30)
    code = cli_main(["bench", "--model", "sample:mlp", "--python", fake, "--steady", "3", "--json"])
    cli = json.loads(capsys.readouterr().out)
    app = run_in_app(qtbot, config)
    assert (cli["status"], code) == (app.status.value, 0) == ("ok", 0), app.headline
    cli_run = cli["runs"][0]
    # The result stands as the probe left it: the late phase end changed no figure.
    assert cli_run["phases"]["load"]["duration"] == app.phases["load"].duration == 0.001
    assert cli_run["failure"] is None and app.failure is None
    assert cli_run["late_events"] >= 1 and "after the probe's result" in " ".join(cli_run["notes"])
    if case != "an error from a helper after the exit":  # the app ended the helper before it wrote
        assert app.late_count == cli_run["late_events"] and app.notes == cli_run["notes"]
    assert_nothing_left(fake)
