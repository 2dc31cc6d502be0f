"""The app's "Anatomy of the first step": an extra run with TensorFlow's profiler on, started
from the Run tab (toolbar, Run menu, Ctrl+Shift+A); its parts appear as sub-rows of the first
step in the phase table, as a split bar under it in the waterfall, and in the review image."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from tflaunch.core.report.review import run_review
from tflaunch.core.run.anatomy import anatomy_rows, short_label
from tflaunch.core.run.record import RunStatus
from tflaunch.core.units import format_duration

PROGRAMS = Path(__file__).parents[1] / "programs"
RUN_TIMEOUT_MS = 180_000


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_anatomy_of_a_programs_first_step_in_the_window(qtbot, window, screenshot):
    action = window.window_actions.anatomy
    assert action.shortcut() == QKeySequence("Ctrl+Shift+A")
    panel = window.panel
    panel.subject.setCurrentIndex(1)
    panel.program.setText("python fit_tfdata.py --steps 40")
    panel.workdir.setText(str(PROGRAMS))
    panel.steady.setValue(0)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(window.toolbar.widgetForAction(action), Qt.MouseButton.LeftButton)
        assert not action.isEnabled() and window.cancel_action.isEnabled()  # it runs: the live views show it
    record = finished.args[0]
    assert record.status is RunStatus.OK, record.headline
    assert record.anatomy is not None and record.anatomy.phase == "first_step" and record.anatomy.error is None, \
        record.anatomy
    table = window.run_view.phases
    labels = [table.item(r, 0).text() for r in range(table.rowCount())]
    step = labels.index("First step")
    parts = anatomy_rows(record.anatomy)
    for offset, (label, seconds, _) in enumerate(parts, start=1):
        assert table.item(step + offset, 0).text() == f"  · {short_label(label)}"
        assert table.item(step + offset, 2).text() == format_duration(seconds)
        assert f"run #{record.history_id}" in table.item(step + offset, 0).toolTip()
    waterfall = window.run_view.waterfall
    assert waterfall.part_names == [label for label, _, _ in parts]
    screenshot(window, "anatomy-finished")
    table.setMinimumHeight(table.content_height())  # every sub-row in view, for the README's picture
    table.resize(table.width(), table.content_height())
    screenshot(table, "anatomy-phase-table")
    review = run_review(record)
    assert review.table is not None and any(row[0].startswith("  · tracing") for row in review.table[1])
    assert any(label == "Anatomy" and f"run #{record.history_id}" in text for label, text in review.facts)
