"""Warm launch from the app: the script is forked from a warm server, its output reaches
the Log, its exit code the run, its memory the graph (the script is the server's child,
not the launcher's), the profile's tf.config settings apply; and a warm launch that is
not possible runs cold and says why."""

from __future__ import annotations

import shutil
import sys
import tempfile

import pytest

from tflaunch.core.run.record import RunStatus
from tflaunch.core.run.warm import warm_start
from tflaunch.core.run.words import start_kind
from tflaunch.core.settings.config import LaunchConfig

RUN_TIMEOUT_MS = 120_000
SCRIPT = """
import sys
import tensorflow as tf
x = tf.ones((256, 256))
print("intra", tf.config.threading.get_intra_op_parallelism_threads(), "sum", float(tf.reduce_sum(x @ x)))
sys.exit(int(sys.argv[1]))
"""
MIB = 1 << 20


@pytest.fixture
def runtime(monkeypatch):
    folder = tempfile.mkdtemp(prefix="tfl-", dir="/tmp")  # short: a socket's path has 107 bytes at most
    monkeypatch.setenv("TFLAUNCH_RUNTIME_DIR", folder)
    yield
    warm_start.stop_servers()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_warm_launch_runs_the_script_forked_and_samples_it(qtbot, window, tmp_path, runtime):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    window.use_config(LaunchConfig(intra=3))
    records, details = [], []
    for code in ("0", "4"):  # the first starts the server, the second reuses it
        with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
            window.start_script([sys.executable, str(script), code], warm=True)
        records.append(finished.args[0])
        details.append(window.run_view.summary.settings.text())
    first, second = records
    # The first launch's figure includes the server's start (its import): it says so; the second's does not.
    assert "includes the warm server's start" in details[0] and "includes the warm server" not in details[1]
    assert any("this launch started one and waited for its import" in n for n in first.notes), first.notes
    assert not any("waited for its import" in n for n in second.notes), second.notes
    log = window.log.text.toPlainText()
    # One engine: the script is the Run tab's program subject, observed to its exit.
    assert first.status is RunStatus.OK and first.config.program == ("python", str(script), "0")
    assert first.config.until == "exit", list(first.phases)
    assert "intra 3 sum 16777216.0" in log and warm_start.CHILD_LINE in log, log
    assert second.status is RunStatus.FAILED and "exited with code 4" in window.run_view.summary.settings.text()
    # The launcher alone holds tens of MiB; TensorFlow's process hundreds: the graph follows the script.
    assert max(rss for _, rss in second.samples) > 200 * MIB
    assert len(warm_start.running_servers()) == 1
    assert first.headline.endswith(", warm)"), first.headline  # the headline, and History, say how it started
    assert start_kind(first) == "warm"


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_warm_launch_that_cannot_be_warm_runs_cold_and_says_why(qtbot, window, tmp_path, runtime):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.start_script([sys.executable, "-X", "importtime", str(script), "0"], warm=True)
    assert finished.args[0].status is RunStatus.OK
    assert start_kind(finished.args[0]) == "cold" and "cold: warm start was not possible" in finished.args[0].headline
    # Why, in the app's own words (not only in the child's log): the summary and the run's notes.
    assert "started cold: the interpreter option -X" in window.run_view.summary.settings.text()
    assert any(n.startswith("Asked to start warm, started cold: the interpreter option -X") for n in
               finished.args[0].notes), finished.args[0].notes
    log = window.log.text.toPlainText()
    assert "warm start not possible (the interpreter option -X" in log and "starting cold" in log
    assert "sum 16777216.0" in log


def test_the_launch_script_dialog_offers_the_last_script_again(qtbot, window, tmp_path, monkeypatch):
    """It forgot the script, arguments and Warm every time: a second "warm" launch ran cold."""
    from tflaunch.gui.run.script_dialog import ScriptDialog

    script = tmp_path / "train.py"
    script.write_text("pass")
    launched = []
    monkeypatch.setattr(window, "start_script", lambda argv, warm=False: launched.append((argv, warm)))

    def fill(dialog: ScriptDialog) -> int:
        dialog.script.setText(str(script))
        dialog.arguments.setText("--epochs 3")
        dialog.warm.setChecked(True)
        return ScriptDialog.DialogCode.Accepted

    def accept_as_offered(dialog: ScriptDialog) -> int:
        offered.append(dialog.remembered())
        return ScriptDialog.DialogCode.Accepted

    offered: list = []
    monkeypatch.setattr(ScriptDialog, "exec", fill)
    window.ask_script()
    monkeypatch.setattr(ScriptDialog, "exec", accept_as_offered)
    window.ask_script()
    assert offered == [(str(script), "--epochs 3", True)]
    assert launched[-1] == ([window.panel.python.text(), str(script), "--epochs", "3"], True), "warm again"
