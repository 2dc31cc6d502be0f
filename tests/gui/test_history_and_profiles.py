"""History, comparison and profiles in the window, with real runs and real files."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
import tomllib

import psutil
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.run.record import RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.gui.history.history_view import UNDO_SECONDS
from tflaunch.gui.widgets.palette import highlight_background

from ..builders import finished_record

RUN_TIMEOUT_MS = 180_000


def run(qtbot, window, config: LaunchConfig):
    window.use_config(config)
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.start_run()
    return finished.args[0]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_runs_are_stored_and_come_back_from_history(qtbot, window):
    record = run(qtbot, window, LaunchConfig(model="sample:mlp", steady=2))
    assert record.history_id is not None
    stored = History(history_path()).load(record.history_id)
    assert stored.status is RunStatus.OK and stored.samples == record.samples
    view = window.history_view
    assert view.model.rowCount() == 1 and view.model.item(0, 5).text() == "ok"
    view.select_ids([record.history_id])
    qtbot.mouseClick(view.show_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is window.run_view
    assert window.run_view.record.history_id == record.history_id

    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as again:
        view.select_ids([record.history_id])
        qtbot.mouseClick(view.rerun_button, Qt.MouseButton.LeftButton)
    assert again.args[0].config == record.config and view.model.rowCount() == 2
    view.filter.setText("nothing matches this")
    assert view.proxy.rowCount() == 0
    view.filter.clear()
    view.select_ids([record.history_id])
    view.delete_selected()
    assert view.model.rowCount() == 1


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_compare_two_runs_and_save_the_best_as_a_profile(qtbot, window, screenshot):
    slow = run(qtbot, window, LaunchConfig(model="sample:mlp", steady=2, intra=1))
    fast = run(qtbot, window, LaunchConfig(model="sample:mlp", steady=2))
    window.history_view.select_ids([slow.history_id, fast.history_id])
    qtbot.mouseClick(window.history_view.compare_button, Qt.MouseButton.LeftButton)
    compare = window.compare_view
    assert window.tabs.currentWidget() is compare and len(compare.runs) == 2
    base = compare.baseline.currentIndex()
    other = 1 - base
    cell = compare.phases.item(0, other).text()
    # One run a side: a figure, never a difference (a statistic needs three runs).
    assert cell.endswith("(1 run: no spread)") and (" s " in cell or " ms " in cell), cell
    row_names = [compare.settings.verticalHeaderItem(r).text() for r in range(compare.settings.rowCount())]
    intra_row = row_names.index("Intra-op threads")
    assert intra_row == 0, "the settings that differ come first"
    tint = highlight_background().name()
    assert compare.settings.item(intra_row, 0).background().color().name() == tint
    assert {compare.settings.item(intra_row, col).text() for col in (0, 1)} == {"1", "default (TensorFlow decides)"}
    model_row = row_names.index("Model")
    assert compare.settings.item(model_row, 0).background().color().name() != tint
    screenshot(window, "compare")

    runs = compare.runs
    assert window.save_profile("winner", [runs[other]], [runs[base]])
    profile = window.profiles.load("winner")
    assert profile.evidence["baseline"]["runs"] == 1 and profile.evidence["runs"] == 1


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_profiles_view_applies_lists_broken_files_and_diffs(qtbot, window, screenshot):
    record = run(qtbot, window, LaunchConfig(model="sample:mlp", steady=2, intra=2, jit_compile=True))
    assert window.save_profile("two-threads", [record])
    assert not window.save_profile("two-threads", [record]), "an existing name is refused"
    assert "exists already" in window.statusBar().currentMessage()
    window.profiles.duplicate("two-threads", "copy")
    (profiles_dir() / "damaged.toml").write_text("schema_version = [")
    view = window.profiles_view
    view.refresh()
    texts = [view.list.item(i).text() for i in range(view.list.count())]
    assert texts == ["copy", "damaged (broken)", "two-threads"]
    view.select("damaged")
    assert "cannot be used" in view.detail.toPlainText() and "not valid TOML" in view.detail.toPlainText()
    assert not view.buttons["Apply"].isEnabled()
    view.list.item(0).setSelected(True)
    view.list.item(1).setSelected(False)
    view.list.item(2).setSelected(True)
    view.diff_selected()
    assert "no differences" in view.detail.toPlainText()
    window.tabs.setCurrentWidget(view)
    view.select("two-threads")
    screenshot(window, "profiles")
    window.use_config(LaunchConfig())
    view.apply_selected()
    applied = window.panel.config()
    assert applied.intra == 2 and applied.jit_compile and applied.steady == 2
    launch = tomllib.loads(window.profiles.load("two-threads").to_toml())["launch"]
    assert "jit_compile=True" in launch["not_applied"]["jit_compile"], "the file says its launch cannot apply it"
    assert launch["tf_config"] == ["intra"]

    window.use_config(LaunchConfig())
    view.select("copy")  # the first click of a double-click selects the item
    item = next(view.list.item(i) for i in range(view.list.count()) if view.list.item(i).text() == "copy")
    view.list.itemDoubleClicked.emit(item)
    assert window.panel.config().intra == 2, "a double-click applies the profile"


APP_UNTIL_KILLED = [sys.executable, "-m", "tflaunch.gui.main", "gui", "--model", "sample:cnn", "--run"]


def _is_probe(process: psutil.Process) -> bool:
    try:  # a child that has just ended (the interpreter check) has no command line any more
        return "probe" in " ".join(process.cmdline())
    except psutil.Error:
        return False


def test_killing_the_app_mid_run_leaves_an_interrupted_run(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path)}
    app = subprocess.Popen(APP_UNTIL_KILLED, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while True:
            assert time.monotonic() < deadline, "the app never stored its run"
            if history_path().exists():
                try:  # the app may be creating the file this moment: its table comes a moment later
                    with sqlite3.connect(history_path()) as db:
                        row = db.execute("SELECT status FROM runs").fetchone()
                except sqlite3.OperationalError:
                    row = None
                # The probe itself, not only the interpreter check the app starts first.
                probes = [p for p in psutil.Process(app.pid).children(recursive=True) if _is_probe(p)]
                if row and row[0] == "running" and probes:
                    break
            time.sleep(0.1)
    finally:
        app.kill()
        app.wait()
    # The orphaned probe notices its launcher is gone and leaves by itself.
    gone, alive = psutil.wait_procs(probes, timeout=10)
    assert not alive, "a probe outlived the app that started it"
    history = History(history_path())
    assert history.interrupted_on_open == 1
    assert history.list_runs()[0].status == "interrupted"


SCRIPT = """
import sys, time
import tensorflow as tf
print("intra", tf.config.threading.get_intra_op_parallelism_threads(), flush=True)
x = tf.random.uniform((512, 512))
for _ in range(20):
    x = tf.linalg.matmul(x, x) / 512.0
time.sleep(0.5)
sys.exit(int(sys.argv[1]))
"""


@pytest.mark.slow  # a second real Launch script run; tests/gui/test_launch_script.py runs one in the fast tier
def test_launch_script_applies_the_settings_and_observes_it_as_a_program(qtbot, window, tmp_path, screenshot):
    """One engine: a launched script is the Run tab's program subject, observed phase by phase
    to its exit (it was a separate `script` subject of one opaque span)."""
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    window.use_config(LaunchConfig(intra=3))
    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        window.start_script([sys.executable, str(script), "0"])
    record = finished.args[0]
    assert record.status is RunStatus.OK and record.is_program and record.config.until == "exit"
    assert "intra 3" in window.log.text.toPlainText()
    assert {"spawn", "import"} <= set(record.phases) and "import" in window.run_view.memory.band_names
    assert window.run_view.summary.headline.text().startswith("Ready in"), window.run_view.summary.headline.text()
    assert window.history_view.model.item(0, 1).text().endswith("train.py 0")  # the command line, shortened
    screenshot(window, "script")

    with qtbot.waitSignal(window.run_finished, timeout=RUN_TIMEOUT_MS) as failed:
        window.start_script([sys.executable, str(script), "5"])
    assert failed.args[0].status is RunStatus.FAILED
    assert "exited with code 5" in window.run_view.summary.settings.text()


def test_the_script_dialog_refuses_a_missing_script(qtbot, tmp_path):
    from tflaunch.gui.run.script_dialog import ScriptDialog

    dialog = ScriptDialog(sys.executable)
    qtbot.addWidget(dialog)
    dialog.script.setText(str(tmp_path / "nope.py"))
    assert dialog.argv() is None and "does not exist" in dialog.error.text()
    real = tmp_path / "real.py"
    real.write_text("pass")
    dialog.script.setText(str(real))
    dialog.arguments.setText('--name "two words"')
    assert dialog.argv() == [sys.executable, str(real), "--name", "two words"]
    dialog.arguments.setText('"unclosed')
    assert dialog.argv() is None and "cannot be read" in dialog.error.text()


def stored(count: int, model: str = "sample:mlp") -> list[int]:
    history = History(history_path())
    ids = [history.record(finished_record(model=model, ready_s=1.0 + i, at=1000.0 + i), "cli") for i in range(count)]
    history.close()
    return ids


def answer(monkeypatch, button):
    """QMessageBox.question answered with `button`; what it was asked, and its default."""
    asked = []

    def question(parent, title, text, buttons, default):
        asked.append((text, default))
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_delete_asks_first_naming_the_runs_and_no_keeps_them(qtbot, make_window, monkeypatch):
    ids = stored(3)
    window = make_window()
    view = window.history_view
    window.tabs.setCurrentWidget(view)
    asked = answer(monkeypatch, QMessageBox.StandardButton.No)
    view.select_ids(ids[:2])
    qtbot.mouseClick(view.delete_button, Qt.MouseButton.LeftButton)
    assert asked == [("Delete 2 runs of sample:mlp from the history?", QMessageBox.StandardButton.No)]
    assert view.model.rowCount() == 3 and not view.can_undo
    view.select_ids([ids[2]])
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Delete)  # the key asks too
    assert asked[-1][0] == "Delete 1 run of sample:mlp from the history?"
    assert view.model.rowCount() == 3


def test_a_delete_is_undone_with_its_samples_by_the_button_or_ctrl_z(qtbot, make_window, monkeypatch):
    ids = stored(3)
    history = History(history_path())
    before = {i: history.load(i) for i in ids}
    window = make_window()
    view = window.history_view
    window.tabs.setCurrentWidget(view)
    answer(monkeypatch, QMessageBox.StandardButton.Yes)
    view.select_ids(ids[:2])
    qtbot.mouseClick(view.delete_button, Qt.MouseButton.LeftButton)
    assert view.model.rowCount() == 1 and [r.id for r in history.list_runs()] == [ids[2]]
    assert view.undo_button.isVisible() and "Deleted 2 runs of sample:mlp" in view.undo_note.text()
    qtbot.mouseClick(view.undo_button, Qt.MouseButton.LeftButton)
    assert view.model.rowCount() == 3 and sorted(view.selected_ids()) == ids[:2]
    for i in ids[:2]:
        again = history.load(i)
        assert again.samples == before[i].samples and again.samples, "samples came back"
        assert again.phases == before[i].phases and again.config == before[i].config
    assert not view.undo_button.isVisible() and not view.can_undo

    view.select_ids([ids[0]])
    qtbot.mouseClick(view.delete_button, Qt.MouseButton.LeftButton)
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert view.model.rowCount() == 3 and history.load(ids[0]).samples == before[ids[0]].samples


def test_the_undo_times_out(qtbot, make_window, monkeypatch):
    ids = stored(1)
    window = make_window()
    view = window.history_view
    window.tabs.setCurrentWidget(view)
    assert view._undo_timer.interval() == UNDO_SECONDS * 1000
    view._undo_timer.setInterval(50)
    answer(monkeypatch, QMessageBox.StandardButton.Yes)
    view.select_ids(ids)
    view.ask_and_delete()
    assert view.can_undo
    qtbot.waitUntil(lambda: not view.can_undo and not view.undo_button.isVisible(), timeout=2000)
    view.undo_delete()  # nothing left to undo: nothing happens
    assert view.model.rowCount() == 0


def test_the_profile_pane_shows_c1_controls_and_bidi_overrides_as_escapes(qtbot, window):
    """The TOML pane printed them raw: a bidi override reorders what the reader sees (issue 43)."""
    from tflaunch.core.store.profiles import Profile

    window.profiles.save(Profile("odd", LaunchConfig(extra_env={"OMP_PROC_BIND": "a\u202eb\x85c"}), {"runs": 1}))
    view = window.profiles_view
    view.refresh()
    view.select("odd")
    shown = view.detail.toPlainText()
    assert "a\\u202eb\\x85c" in shown and "\u202e" not in shown and "\x85" not in shown
