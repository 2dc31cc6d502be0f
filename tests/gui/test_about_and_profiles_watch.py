"""Help > About names the files the window really uses; the Profiles list follows its
folder on disk (files added, edited and removed from outside the app), selection kept."""

from __future__ import annotations

import subprocess
import sys

from PySide6.QtWidgets import QApplication

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile

WATCH_MS = 5000  # the list follows within the debounce (0.25 s); the margin is for a loaded machine


def _help_action(window, text: str):
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    return next(a for a in help_menu.actions() if a.text() == text)


def test_about_shows_the_version_paths_and_versions_and_copies_them(qtbot, window):
    _help_action(window, "&About tflaunch").trigger()
    dialog = window.window_actions.about_dialog
    qtbot.waitUntil(dialog.isVisible)
    shown = dialog.text.text()
    for path in (window.profiles.folder, window.profiles.trust.path, window.history.path,
                 window.state.settings.fileName()):
        assert str(path) in shown, path
    assert "tflaunch 0.1.0" in shown and "Licence: MIT" in shown
    for runtime in ("Python", "Qt", "pyqtgraph"):
        assert f"<b>{runtime}</b>" in shown
    dialog.copy_button.click()
    copied = QApplication.clipboard().text()
    assert copied == dialog.details()
    assert f"Run history: {window.history.path}" in copied and f"Profiles folder: {window.profiles.folder}" in copied


def _names(view) -> list[str]:
    return [view.list.item(i).text() for i in range(view.list.count())]


def test_the_profiles_list_follows_files_changed_outside_and_keeps_the_selection(qtbot, window):
    store = window.profiles
    store.save(Profile("alpha", LaunchConfig(model="sample:mlp", intra=2)))
    view = window.profiles_view
    window.tabs.setCurrentWidget(view)
    view.select("alpha")
    assert view.usable_entries()[0].name == "alpha"

    # Added by another process.
    beta = Profile("beta", LaunchConfig(model="sample:cnn")).to_toml()
    subprocess.run([sys.executable, "-c", "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])",
                    str(store.folder / "beta.toml"), beta], check=True)
    qtbot.waitUntil(lambda: _names(view) == ["alpha", "beta"], timeout=WATCH_MS)
    assert [e.name for e in view.selected_entries()] == ["alpha"], "the selection is kept"

    # Edited in place (an editor saving over the file): the shown settings follow.
    path = store.folder / "alpha.toml"
    path.write_text(path.read_text().replace("intra = 2", "intra = 6"))
    qtbot.waitUntil(lambda: "intra = 6" in view.detail.toPlainText(), timeout=WATCH_MS)
    assert [e.name for e in view.selected_entries()] == ["alpha"]

    # Removed.
    (store.folder / "beta.toml").unlink()
    qtbot.waitUntil(lambda: _names(view) == ["alpha"], timeout=WATCH_MS)
    assert [e.name for e in view.selected_entries()] == ["alpha"]


def test_the_profiles_list_notices_the_folder_made_after_it_opened(qtbot, window):
    """No profile saved yet: the folder does not exist; the first one written still shows."""
    store = window.profiles
    assert not store.folder.exists()
    view = window.profiles_view
    assert _names(view) == []
    store.folder.mkdir(parents=True)
    (store.folder / "first.toml").write_text(Profile("first", LaunchConfig(model="sample:mlp")).to_toml())
    qtbot.waitUntil(lambda: _names(view) == ["first"], timeout=WATCH_MS)
