"""The run history under faults, seen from the app: it starts whatever state the file is in,
says what is wrong (which file, why, what to do), shows every run it measured, and never
raises out of a view. Runs use a fake interpreter; the window is the real one."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import QSettings, Qt

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.run.record import RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store import history_file
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import ProfileStore
from tflaunch.gui.app import create_app, open_history
from tflaunch.gui.history.history_view import DAMAGED_COLOR
from tflaunch.gui.shell.main_window import MainWindow

from ..gui.conftest import NO_GPU
from .children import fake_python
from .test_history_faults import BUSY_S, assert_intact, damage_page_holding, locked, read_only, stored_runs

RUN_MS = 60_000


def app_window(qtbot, settings_file) -> MainWindow:
    """The window as `tflaunch gui` opens it: the history, or None and why."""
    create_app()
    history, problem = open_history()
    window = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat), history,
                        ProfileStore(profiles_dir()), gpu_inventory=lambda: NO_GPU, history_problem=problem)
    qtbot.addWidget(window)
    return window


def run_fake(qtbot, window, tmp_path):
    window.use_config(LaunchConfig(model="sample:mlp", python=fake_python(tmp_path / "fake", "succeed()"), steady=3))
    with qtbot.waitSignal(window.run_finished, timeout=RUN_MS) as finished:
        window.start_run()
    record = finished.args[0]
    assert record.status is RunStatus.OK, record.headline
    assert window.run_view.record is record, "the run is shown, stored or not"
    return record


def test_the_app_starts_on_a_damaged_history_says_so_and_still_runs(qtbot, settings_file, tmp_path):
    path = history_path()
    stored_runs(12, samples=300)
    damage_page_holding(path, b"model-06")
    before = path.read_bytes()
    window = app_window(qtbot, settings_file)
    assert window.history is None
    assert window.statusBar().currentMessage() == (
        f"Runs will not be kept: The run history {path} is damaged (database disk image is malformed). tflaunch "
        f"left it untouched. Move it aside (mv {path} {path}.damaged) to start a new one.")
    assert "could not be opened" in window.history_view.count.text()
    window.show()
    qtbot.waitExposed(window)
    record = run_fake(qtbot, window, tmp_path)
    assert window.statusBar().currentMessage() == record.headline
    assert path.read_bytes() == before


def test_a_damaged_row_is_greyed_with_its_reason_and_showing_it_says_why(qtbot, make_window):
    good, bad = stored_runs()
    with sqlite3.connect(history_path()) as db:
        db.execute("UPDATE runs SET status = 'weird' WHERE id = ?", (bad,))
    window = make_window()
    view = window.history_view
    rows = {view.model.item(r, 0).data(Qt.ItemDataRole.UserRole): r for r in range(view.model.rowCount())}
    damaged = rows[bad]
    assert view.model.item(damaged, 5).text() == "damaged"
    assert view.model.item(damaged, 1).foreground().color().name() == DAMAGED_COLOR
    assert "status is 'weird'" in view.model.item(damaged, 1).toolTip()
    assert "1 damaged" in view.count.text()
    view.select_ids([bad])
    qtbot.mouseClick(view.show_button, Qt.MouseButton.LeftButton)
    assert window.statusBar().currentMessage() == (
        f"Run {bad} in the run history {history_path()} is damaged (status is 'weird', which tflaunch does not "
        f"know). It cannot be shown; the other runs are not affected. Delete it with `tflaunch history delete "
        f"{bad}` or in the app's History tab.")
    assert window.current_review() is None, "no review of a run that cannot be read"
    view.select_ids([good])
    qtbot.mouseClick(view.show_button, Qt.MouseButton.LeftButton)
    assert window.run_view.record.history_id == good
    view.select_ids([bad])
    view.delete_selected()
    assert view.model.rowCount() == 1


def test_a_run_the_history_cannot_store_says_so_and_is_still_shown(qtbot, make_window, tmp_path, monkeypatch):
    monkeypatch.setattr(history_file, "BUSY_TIMEOUT_S", BUSY_S)
    kept = stored_runs()
    window = make_window()
    with locked(history_path()):
        record = run_fake(qtbot, window, tmp_path)
    assert record.history_id is None
    assert window.statusBar().currentMessage() == (
        f"{record.headline} — The run history {history_path()} could not be written (database is locked by another "
        "process for more than 0.3 s); this run is not stored. Let the other tflaunch finish, or close the program "
        "that holds it, then try again.")
    assert window.run_list.rowCount() == 1
    assert_intact(kept)
    stored = run_fake(qtbot, window, tmp_path)  # the lock gone, the next run is stored again
    assert stored.history_id is not None and window.statusBar().currentMessage() == stored.headline


def test_the_app_lists_a_read_only_history_and_says_runs_are_not_stored(qtbot, settings_file, tmp_path):
    kept = stored_runs()
    path = history_path()
    with read_only(path):
        window = app_window(qtbot, settings_file)
        message = window.statusBar().currentMessage()
        assert message.startswith(f"Runs will be measured but not stored: The run history {path} is read-only (")
        assert "chmod u+w" in message and "TFLAUNCH_DATA_DIR" in message
        assert window.history_view.model.rowCount() == len(kept)
        window.show()
        qtbot.waitExposed(window)
        record = run_fake(qtbot, window, tmp_path)
        assert window.statusBar().currentMessage().startswith(
            f"{record.headline} — The run history {path} is read-only (")
        assert "this run is not stored" in window.statusBar().currentMessage()
        window.close()
    assert_intact(kept)
    assert History(path).read_only is None


def test_the_app_starts_on_saved_settings_out_of_range(qtbot, make_window, settings_file):
    """A settings file edited by hand (intra = 10**30, a GPU "x") must not stop the app."""
    from PySide6.QtCore import QSettings

    settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
    settings.setValue("run/config", '{"model": "sample:mlp", "intra": 1000000000000000000000000000000}')
    settings.sync()
    window = make_window()
    assert window.panel.config().intra == 0, "defaults, not a crash"
    settings.setValue("run/config", '{"model": "sample:mlp", "visible_gpus": ["x"]}')
    settings.sync()
    assert make_window().panel.config().visible_gpus is None
