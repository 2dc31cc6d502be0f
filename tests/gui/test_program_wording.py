"""A subject in its own words: a program is not called a model, a refused program shows no
model phases, the status bar does not outlive the headline it spoke of, and Ctrl+S on
another tab says which run it saves."""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QInputDialog

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, evidence_from_runs

from ..builders import finished_record


def test_a_refused_program_shows_its_refusal_and_no_model_phases(qtbot, window):
    panel = window.panel
    panel.subject.setCurrentIndex(1)
    panel.program.setText("python nothere.py")
    window.start_run()
    assert window.run_view.summary.headline.text() == "Not started"
    assert "nothere.py was not found" in window.run_view.summary.settings.text()
    table = window.run_view.phases
    labels = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert labels == [], f"a refused run shows phases: {labels}"
    window.run_view.refresh()  # the tick and the palette redraw it: it stays without rows
    assert window.run_view.phases.rowCount() == 0
    assert window.statusBar().currentMessage().startswith("Cannot run:")
    assert window.log.text.toPlainText().startswith("── Not started: The script nothere.py was not found")

    # A run picked in the session's list replaces the headline: the refusal's status goes with it.
    record = finished_record()
    window.run_list.add_record(record)
    window._on_run_selected(record)
    assert window.run_view.summary.headline.text() != "Not started" and window.run_view.phases.rowCount() > 0
    assert window.statusBar().currentMessage() == "", "the status bar still speaks of the refused run"


def test_the_window_names_a_program_by_its_command_not_as_a_model(qtbot, window):
    assert "model" not in window.statusBar().currentMessage(), "the ready message assumes a model"
    assert "a model or a program" in window.run_view.summary.headline.text()
    assert window.run_list.horizontalHeaderItem(1).text() == "Subject"
    window.tabs.setCurrentWidget(window.history_view)
    assert window.history_view.model.headerData(1, Qt.Orientation.Horizontal) == "Subject"

    program = finished_record()
    program.config = LaunchConfig(program=("python", "fit.py", "--name", "a b"))
    window.profiles.save(Profile("from-a-program", LaunchConfig(intra=2), evidence_from_runs([program])))
    window.tabs.setCurrentWidget(window.profiles_view)
    window.profiles_view.refresh()
    items = window.profiles_view.list.findItems("from-a-program", Qt.MatchFlag.MatchExactly)
    assert items, "the profile is listed"
    tip = items[0].toolTip()
    assert tip.startswith("python fit.py --name 'a b': "), f"the program's profile reads as {tip!r}"
    assert "sample:mlp" not in tip


def test_ctrl_s_on_the_compare_tab_says_which_run_it_saves(qtbot, window):
    record = finished_record()
    record.history_id = 42
    window.run_view.show_record(record)
    window.tabs.setCurrentWidget(window.compare_view)
    asked: list[str] = []

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QInputDialog):
            QTimer.singleShot(20, answer)
            return
        asked.append(dialog.labelText())
        dialog.reject()

    QTimer.singleShot(0, answer)
    window.window_actions.save_profile.trigger()
    assert asked and "#42" in asked[0] and "sample:mlp" in asked[0], asked
    assert "#42" in window.statusBar().currentMessage()


def test_a_launched_script_is_named_with_its_quotes(qtbot, window, tmp_path):
    script = tmp_path / "my train.py"
    script.write_text("import sys\nsys.exit(0)\n")
    with qtbot.waitSignal(window.run_finished, timeout=120_000):
        window.start_script([sys.executable, str(script), "--name", "a b"])
        running = window.statusBar().currentMessage()
    # The Run tab's program subject (one engine), named by its command line with its quotes.
    assert running.startswith(f"Running python '{script.parent.name}/my train.py' --name 'a b'"), running
