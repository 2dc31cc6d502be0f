"""The window measures a program: the Run tab's Program subject, its phases live, stopped at
its ready point, and the pictures of it, light and dark."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from tflaunch.core.run.record import PhaseState, RunStatus
from tflaunch.core.units import format_duration

from .test_theme_and_sizes import dark_palette, restore_palette  # noqa: F401 (a fixture)

PROGRAMS = Path(__file__).parents[1] / "programs"
RUN_TIMEOUT_MS = 180_000


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_program_runs_live_in_the_window_light_and_dark(qtbot, window, screenshot, restore_palette):  # noqa: F811
    panel = window.panel
    panel.subject.setCurrentIndex(1)
    assert not panel.model.isVisibleTo(panel) and panel.workdir.isVisibleTo(panel)
    panel.program.setText("python fit_tfdata.py --steps 400")
    panel.workdir.setText(str(PROGRAMS))
    panel.steady.setValue(10)
    live: list[Path] = []

    def on_event(record):
        step = record.phases.get("first_step")
        if step is not None and step.state is PhaseState.RUNNING and not live:
            live.append(screenshot(window, "program-running"))
            table = window.run_view.phases
            labels = [table.item(r, 0).text() for r in range(table.rowCount())]
            assert "First step" in labels and "Trace" not in labels  # the program's rows, not the probe's

    window.runner.phase_changed.connect(on_event)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(window.toolbar.widgetForAction(window.run_action), Qt.MouseButton.LeftButton)
    record = finished.args[0]
    assert record.status is RunStatus.OK and record.stopped_at_ready, record.headline
    assert live, "the first step was seen running"
    table = window.run_view.phases
    # A phase that ran inside another is indented under it ("└ Data" under First step).
    labels = [table.item(r, 0).text().lstrip("\u2002└ ") for r in range(table.rowCount())]
    for label in ("Import", "Build", "Compile", "Data", "First step", "Steady state"):
        assert label in labels, labels
    row = labels.index("First step")
    assert table.item(row, 2).text() == format_duration(record.phases["first_step"].duration)
    assert window.run_view.summary.ready.text() == format_duration(record.time_to_ready)
    assert "First step" in window.run_view.waterfall.bar_names or "first_step" in window.run_view.waterfall.bar_names
    screenshot(window, "program-finished")
    app = QApplication.instance()
    light = QPalette(app.palette())
    app.setPalette(dark_palette())
    qtbot.wait(100)
    screenshot(window, "program-finished-dark")
    app.setPalette(light)
    assert record.history_id is not None, "stored in the history like any run"
