"""A bad program command line is said under its field, in the form's layout, and in the run's
headline; the field and its Script… button stay usable after every kind of error."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QPushButton, QWidget

from .test_theme_and_sizes import restore_palette  # noqa: F401 (a fixture)

PROGRAM_ERRORS = [
    ("python nothere.py", "nothere.py was not found"),
    ("python 'train.py --epochs 1", "unclosed quote"),
    ("", "command line is empty"),
    ("   ", "command line is empty"),
    ("no-such-command-here --flag", "not found on PATH"),
    ("./not_here.sh", "was not found"),
]


def _hit(window: QWidget, widget: QWidget) -> QWidget | None:
    """The widget a click at `widget`'s centre lands on (what the mouse reaches)."""
    centre = widget.mapTo(window, widget.rect().center())
    return window.childAt(centre)


def _lands_on(window: QWidget, widget: QWidget) -> bool:
    hit = _hit(window, widget)
    return hit is widget or (hit is not None and widget.isAncestorOf(hit))


@pytest.mark.parametrize(("command", "words"), PROGRAM_ERRORS)
def test_a_bad_command_line_is_said_under_its_field_which_stays_usable(qtbot, window, command, words):
    panel = window.panel
    panel.subject.setCurrentIndex(1)
    panel.program.setText(command)
    qtbot.mouseClick(window.toolbar.widgetForAction(window.run_action), Qt.MouseButton.LeftButton)
    assert not window.running, "nothing started"
    label = panel._errors["program"]
    qtbot.waitUntil(label.isVisible)
    assert words in label.text()
    # Under its field, laid out by the form: not an overlay over the rows.
    row = panel._program_row
    top_left = label.mapTo(panel, QPoint(0, 0))
    assert top_left.y() >= row.mapTo(panel, QPoint(0, row.height())).y()
    assert label.height() < 6 * label.fontMetrics().lineSpacing()
    assert label.width() <= panel.width()
    # The mouse reaches the field and its button; the field takes typing.
    script = next(b for b in row.findChildren(QPushButton) if b.text() == "Script…")
    assert _lands_on(window, panel.program), _hit(window, panel.program)
    assert _lands_on(window, script), _hit(window, script)
    qtbot.mouseClick(panel.program, Qt.MouseButton.LeftButton)
    panel.program.selectAll()
    qtbot.keyClicks(panel.program, "python -c pass")
    assert panel.program.text() == "python -c pass"
    # The run's headline says it too, not only the status bar.
    summary = window.run_view.summary
    assert summary.headline.text() == "Not started"
    assert words in summary.settings.text().replace("\u200b", "")
    assert words in window.statusBar().currentMessage()


def test_an_empty_program_never_runs_the_model(qtbot, window):
    panel = window.panel
    panel.subject.setCurrentIndex(1)
    panel.program.setText("")
    window.start_run()
    assert not window.running and window.runner.record is None


def test_the_reason_goes_when_the_subject_hides_its_field(qtbot, window):
    panel = window.panel
    panel.subject.setCurrentIndex(1)
    panel.program.setText("python nothere.py")
    window.start_run()
    label = panel._errors["program"]
    assert label.isVisible()
    panel.subject.setCurrentIndex(0)
    assert not label.isVisible()
    panel.subject.setCurrentIndex(1)
    assert label.isVisible() and _lands_on(window, panel.program)


def test_a_hidden_field_of_the_other_subject_never_reaches_a_run(qtbot, window, tmp_path):
    panel = window.panel
    panel.subject.setCurrentIndex(1)
    panel.program.setText("python train.py")
    panel.workdir.setText(str(tmp_path))
    panel.editors["until"].put("exit")
    panel.model.setCurrentText("/models/resnet.keras")
    program = panel.config()
    assert program.workdir == str(tmp_path) and program.model == "sample:mlp", "no model setting on a program"
    panel.subject.setCurrentIndex(0)
    model = panel.config()
    assert model.model == "/models/resnet.keras"
    assert (model.program, model.workdir, model.until) == ((), "", "first_step"), "the hidden Working folder"
    assert panel.form_config().workdir == str(tmp_path), "kept in the form for when Program is chosen again"


def test_the_refusal_keeps_a_readable_red_in_the_dark(qtbot, window, restore_palette):  # noqa: F811
    from PySide6.QtWidgets import QApplication

    from .test_theme_and_sizes import dark_palette

    panel = window.panel
    panel.subject.setCurrentIndex(1)
    panel.program.setText("python nothere.py")
    window.start_run()
    light = window.run_view.summary.headline.styleSheet()
    QApplication.instance().setPalette(dark_palette())
    qtbot.waitUntil(lambda: window.run_view.summary.headline.styleSheet() != light)
    assert window.run_view.summary.headline.text() == "Not started"
