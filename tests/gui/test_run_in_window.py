"""Drive the real window through real runs: success, cancel, failure."""

from __future__ import annotations

import sys

import psutil
import pytest
from PySide6.QtCore import Qt

from tflaunch.core.phases import PHASES
from tflaunch.core.run.record import PhaseState, RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.units import format_bytes, format_duration
from tflaunch.gui.run.phase_table import rows_of

RUN_TIMEOUT_MS = 180_000


def click_run(qtbot, window):
    toolbar_button = window.toolbar.widgetForAction(window.run_action)
    qtbot.mouseClick(toolbar_button, Qt.MouseButton.LeftButton)


def test_a_run_fills_every_view(qtbot, window, screenshot):
    window.panel.model.setCurrentText("sample:mlp")
    window.panel.steady.setValue(10)
    screenshot(window, "idle")
    running_shot = []

    def on_event(record):
        if (p := record.phase("load")) is not None and p.state is PhaseState.RUNNING and not running_shot:
            running_shot.append(screenshot(window, "running"))

    window.runner.phase_changed.connect(on_event)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        click_run(qtbot, window)
        assert not window.run_action.isEnabled() and window.cancel_action.isEnabled()
    record = finished.args[0]
    assert record.status is RunStatus.OK, record.headline

    table = window.run_view.phases
    for name in PHASES:
        row = rows_of(record).index(name)
        assert table.item(row, 1).text() == "done"
        expected = (f"{format_duration(record.latency['median'])}/call" if name == "steady"
                    else format_duration(record.phases[name].duration))
        assert table.item(row, 2).text() == expected
        assert table.item(row, 4).text().endswith("MiB")
    assert table.item(rows_of(record).index("other"), 2).text() == format_duration(record.other_time)

    summary = window.run_view.summary
    assert summary.ready.text() == format_duration(record.time_to_ready)
    assert summary.peak.text() == format_bytes(record.peak_rss)

    memory = window.run_view.memory
    times = memory.sample_times
    assert len(times) >= 10, "sampled at 15 Hz through a run of over a second"
    spans = record.offsets()
    assert times[0] <= spans["import"][0] + spans["import"][1]
    # The graph follows the run to its end, give or take a few 15 Hz ticks: after import,
    # sample:mlp is ready within a tick or two, so "a sample during load" was a race.
    ready_at = spans["first"][0] + spans["first"][1]
    assert times[-1] >= ready_at - 0.5, (times[-1], ready_at)
    assert set(memory.band_names) == set(PHASES)

    assert window.run_list.rowCount() == 1 and window.run_list.item(0, 5).text() == "ok"
    assert "tensorflow" not in sys.modules, "the GUI process must never import TensorFlow"
    assert running_shot, "a screenshot was taken while loading"
    screenshot(window, "finished")


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_cancel_during_load_kills_the_child(qtbot, window, wide_keras):
    window.use_config(LaunchConfig(model=str(wide_keras), steady=1))
    pids = []

    def cancel_when_loading(record):
        if (p := record.phase("load")) is not None and p.state is PhaseState.RUNNING and not pids:
            pids.append(record.pid)
            qtbot.keyClick(window, Qt.Key.Key_Escape)

    window.runner.phase_changed.connect(cancel_when_loading)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.start_run()
    record = finished.args[0]
    assert record.status is RunStatus.CANCELLED and record.failed_phase == "load"
    assert window.run_view.phases.item(PHASES.index("load"), 1).text() == "cancelled"
    assert not psutil.pid_exists(pids[0]) or psutil.Process(pids[0]).status() == psutil.STATUS_ZOMBIE
    assert window.run_view.summary.headline.text() == "Cancelled during Load"
    assert window.run_action.isEnabled()


def test_a_child_killed_from_outside_shows_phase_and_signal(qtbot, window):
    window.use_config(LaunchConfig(model="sample:mlp", steady=1))

    def kill_on_import(record):
        if (p := record.phase("import")) is not None and p.state is PhaseState.RUNNING and record.pid:
            psutil.Process(record.pid).kill()

    window.runner.phase_changed.connect(kill_on_import)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.start_run()
    record = finished.args[0]
    assert record.status is RunStatus.FAILED and record.failed_phase == "import"
    assert window.run_view.summary.headline.text() == "Failed in Import"
    assert "SIGKILL" in window.run_view.summary.settings.text()


def test_a_failing_run_shows_its_error_and_the_app_stays_usable(qtbot, window, python_without_tensorflow,
                                                                 screenshot):
    window.panel.python.setText(python_without_tensorflow)
    window.panel.python_changed.emit(python_without_tensorflow)
    qtbot.waitUntil(lambda: "has no TensorFlow" in window.panel.python_status.text(), timeout=30000)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.start_run()
    record = finished.args[0]
    assert record.status is RunStatus.FAILED and record.failed_phase == "import"
    assert window.run_view.summary.headline.text() == "Failed in Import"
    reason = window.run_view.summary.settings.text().replace("\u200b", "")
    assert python_without_tensorflow in reason and "pip install tensorflow" in reason
    assert window.log_dock.isVisible()
    assert "pip install tensorflow" in window.log.text.toPlainText()
    assert window.run_view.phases.item(PHASES.index("import"), 1).text() == "failed"
    assert window.run_list.item(0, 5).text() == "failed"
    screenshot(window, "failed")
    # Usable: Run waits for an interpreter with TensorFlow, saying so, and comes back with one.
    assert not window.run_action.isEnabled() and "has no TensorFlow" in window.run_action.toolTip()
    window.panel.python.setText(sys.executable)
    window.panel.python_changed.emit(sys.executable)
    qtbot.waitUntil(window.run_action.isEnabled, timeout=30000)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_choosing_a_past_run_shows_it_again(qtbot, window):
    window.use_config(LaunchConfig(model="sample:mlp", steady=1))
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as first:
        window.start_run()
    window.use_config(LaunchConfig(model="sample:mlp", steady=1, intra=1))
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as second:
        window.start_run()
    assert window.run_list.rowCount() == 2 and window.run_list.item(1, 2).text() == "intra=1 steady=1"
    assert window.run_view.record is second.args[0]
    window.run_list.selectRow(0)
    assert window.run_view.record is first.args[0]
    assert window.run_view.summary.ready.text() == format_duration(first.args[0].time_to_ready)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_apps_run_starts_with_the_extra_variables(qtbot, window, tmp_path):
    """Measured = launched in the app too: a PYTHONPATH sitecustomize runs in the child."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os\nwith open(os.environ['TFLAUNCH_MARKER'], 'a') as f:\n    f.write('started\\n')\n")
    marker = tmp_path / "marker.txt"
    extra = {"PYTHONPATH": str(site), "TFLAUNCH_MARKER": str(marker)}
    window.use_config(LaunchConfig(model="sample:mlp", steady=1, extra_env=extra))
    assert window.panel.config().extra_env == extra, "the form carries the variables"
    with qtbot.waitSignal(window.run_finished, timeout=120000) as finished:
        window.start_run()
    record = finished.args[0]
    assert record.status is RunStatus.OK, record.headline
    assert marker.read_text() == "started\n"
    assert record.settings.described["extra_env"] == extra
