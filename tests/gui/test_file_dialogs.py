"""File dialogs open where the user last was for the same purpose, and exports propose a
name from what they show. Dialogs are modal, so QFileDialog's static functions are
replaced by ones that record where they were asked to open and answer as a user would."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QDir
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from tflaunch.core.store.profiles import Profile
from tflaunch.gui.review import review_actions
from tflaunch.gui.run.script_dialog import ScriptDialog
from tflaunch.gui.widgets import file_dialogs

from ..builders import finished_record


class Dialogs:
    """Stands in for QFileDialog: answers each call with the next path, keeps the folder
    or proposed path each was asked to open with."""

    def __init__(self, monkeypatch) -> None:
        self.answers: list[str] = []
        self.asked: list[str] = []
        self.filter = ""
        for name in ("getOpenFileName", "getSaveFileName"):
            monkeypatch.setattr(QFileDialog, name, staticmethod(self._file))
        monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(self._folder))

    def _file(self, _parent, _title, where, filters, selected="", *_):
        self.asked.append(where)
        return (self.answers.pop(0), selected or filters.split(";;")[0]) if self.answers else ("", "")

    def _folder(self, _parent, _title, where, *_):
        self.asked.append(where)
        return self.answers.pop(0) if self.answers else ""


@pytest.fixture
def dialogs(monkeypatch) -> Dialogs:
    return Dialogs(monkeypatch)


def folders(tmp_path: Path, *names: str) -> list[Path]:
    made = [tmp_path / name for name in names]
    for folder in made:
        folder.mkdir()
    return made


def test_each_purpose_remembers_its_own_folder_in_the_window_settings(qtbot, window, dialogs, tmp_path):
    models, envs = folders(tmp_path, "models", "envs")
    dialogs.answers = [str(models / "a.keras"), str(envs / "python3")]
    window.panel.browse_model_file()
    window.panel._browse_python()
    assert dialogs.asked == [QDir.homePath(), QDir.homePath()]  # not the folder the app started in
    assert window.panel.model.currentText() == str(models / "a.keras")
    dialogs.answers = ["", "", str(tmp_path / "resnet_saved")]
    window.panel.browse_model_file()
    window.panel._browse_python()
    window.panel.browse_model_dir()  # a SavedModel folder is a model too
    assert dialogs.asked[2:] == [str(models), str(envs), str(models)]
    dialogs.answers = [""]
    window.panel.browse_model_file()
    assert dialogs.asked[-1] == str(tmp_path)  # the SavedModel's parent: the next one is beside it
    assert window.state.settings.value("dialogs/model") == str(tmp_path)  # in the window's own (temporary) file


def test_scripts_and_profiles_open_in_their_own_last_folders(qtbot, window, dialogs, tmp_path):
    scripts, shared = folders(tmp_path, "scripts", "shared")
    dialog = ScriptDialog("python", window)
    qtbot.addWidget(dialog)
    dialogs.answers = [str(scripts / "train.py")]
    dialog._browse()
    assert dialog.script.text() == str(scripts / "train.py")
    window.profiles.save(Profile("fast", finished_record().config))
    window.profiles_view.refresh()
    window.profiles_view.select("fast")
    dialogs.answers = [str(shared / "fast.toml"), ""]
    window.profiles_view.export_selected()
    window.profiles_view.import_file()  # import opens where the last profile went
    dialogs.answers = [""]
    dialog._browse()
    assert dialogs.asked == [QDir.homePath(), str(Path(QDir.homePath()) / "fast.toml"), str(shared), str(scripts)]
    assert (shared / "fast.toml").exists()


def test_a_review_export_proposes_a_name_from_its_subject_in_the_last_export_folder(qtbot, window, dialogs,
                                                                                     tmp_path):
    exports, = folders(tmp_path, "exports")
    record = finished_record(at=1_800_000_000.0)
    window.run_view.show_record(record)
    stem = f"tflaunch-run-sample-mlp-{time.strftime('%Y-%m-%d-%H%M', time.localtime(record.launched_at))}"
    dialogs.answers = [str(exports / "mine.png")]
    review_actions.export_review(window)
    assert dialogs.asked == [str(Path(QDir.homePath()) / f"{stem}.png")]
    assert QImage(str(exports / "mine.png")).width() == 1600
    dialogs.answers = [""]
    review_actions.export_review(window)
    assert dialogs.asked[-1] == str(exports / f"{stem}.png")


@pytest.mark.parametrize(("typed", "chosen", "expected"), [
    ("r.png", "PNG image at 2×, 3200×1800 (*.png)", ("r.png", "png", 2)),
    ("r.svg", "PNG image, 1600×900 (*.png)", ("r.svg", "svg", 1)),  # the typed name wins
    ("r", "CSV (*.csv)", ("r.csv", "csv", 1)),  # no extension: the filter's
    ("r.v2", "Markdown (*.md)", ("r.v2.md", "md", 1)),
])
def test_the_format_follows_the_name_typed_then_the_filter(typed, chosen, expected):
    path, fmt, scale = review_actions.target(Path(typed), chosen)
    assert (path.name, fmt, scale) == expected


def test_a_dialog_outside_a_window_opens_at_home_and_remembers_nothing(qtbot, dialogs, tmp_path):
    dialog = ScriptDialog("python")
    qtbot.addWidget(dialog)
    assert file_dialogs.settings_of(dialog) is None
    dialogs.answers = [str(tmp_path / "x.py"), ""]
    dialog._browse()
    dialog._browse()
    assert dialogs.asked == [QDir.homePath(), QDir.homePath()]
