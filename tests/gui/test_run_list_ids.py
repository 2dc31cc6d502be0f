"""The session's run list names runs as History, Compare and review images do: by their
History id, and a run the history could not keep says so instead of taking a number."""

from __future__ import annotations

from tflaunch.gui.run.run_list import RunList

from ..builders import finished_record


def test_runs_are_numbered_by_their_history_id_and_an_unstored_one_is_marked(qtbot):
    runs = RunList()
    qtbot.addWidget(runs)
    stored, unstored = finished_record(), finished_record(intra=1)
    stored.history_id = 41
    runs.add_record(stored)
    runs.add_record(unstored)
    assert runs.item(0, 0).text() == "#41" and "History id 41" in runs.item(0, 0).toolTip()
    assert runs.item(1, 0).text() == "not stored"
    assert "not in the history" in runs.item(1, 0).toolTip() and "no id" in runs.item(1, 0).toolTip()


def test_the_window_lists_a_stored_run_by_the_id_history_shows(qtbot, settings_file, tmp_path):
    from PySide6.QtCore import QSettings

    from tflaunch.core.paths import history_path, profiles_dir
    from tflaunch.core.settings.config import LaunchConfig
    from tflaunch.core.store.history import History
    from tflaunch.core.store.profiles import ProfileStore
    from tflaunch.gui.app import create_app
    from tflaunch.gui.shell.main_window import MainWindow

    from ..faults.children import fake_python
    from .conftest import NO_GPU

    create_app()
    python = fake_python(tmp_path / "fake", "succeed()")
    for history in (History(history_path()), None):  # None: the app runs with no history to keep runs
        window = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat), history,
                            ProfileStore(profiles_dir()), gpu_inventory=lambda: NO_GPU)
        qtbot.addWidget(window)
        window.use_config(LaunchConfig(model="sample:mlp", python=python, steady=1))
        with qtbot.waitSignal(window.run_finished, timeout=60_000) as finished:
            window.start_run()
        record = finished.args[0]
        shown = window.run_list.item(0, 0).text()
        if history is not None:
            assert record.history_id is not None and shown == f"#{record.history_id}"
            assert [run.id for run in history.list_runs()] == [record.history_id]
        else:
            assert shown == "not stored"
