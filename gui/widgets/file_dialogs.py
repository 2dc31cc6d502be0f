"""File dialogs that open where the user last was for the same purpose.

One folder is remembered per purpose (models, interpreters, scripts, profiles, review
exports) in the window's settings, so choosing an interpreter does not move where models
are looked for, and nothing opens in whatever folder the app was started from. A widget
outside a window (none to keep settings) gets the home folder and remembers nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from PySide6.QtCore import QDir, QSettings
from PySide6.QtWidgets import QFileDialog, QWidget

from ..adapters.window_state import WindowState

Purpose = Literal["model", "interpreter", "script", "workdir", "profile", "review", "cluster"]
KEY = "dialogs/{}"


def settings_of(widget: QWidget | None) -> QSettings | None:
    """The settings of the window `widget` belongs to (its WindowState's), if any."""
    while widget is not None:
        state = getattr(widget, "state", None)
        if isinstance(state, WindowState):
            return state.settings
        widget = widget.parentWidget()
    return None


def last_folder(widget: QWidget | None, purpose: Purpose) -> str:
    """Where a dialog for `purpose` opens: the folder used last, if it is still there,
    else the home folder."""
    settings = settings_of(widget)
    folder = settings.value(KEY.format(purpose)) if settings is not None else None
    return folder if isinstance(folder, str) and folder and Path(folder).is_dir() else QDir.homePath()


def remember(widget: QWidget | None, purpose: Purpose, chosen: str) -> None:
    """Keep the folder holding what was chosen (a chosen folder's own parent: the next
    SavedModel is usually beside the last one)."""
    settings = settings_of(widget)
    if settings is not None and chosen:
        settings.setValue(KEY.format(purpose), str(Path(chosen).parent))


def open_file(parent: QWidget, purpose: Purpose, title: str, filters: str) -> str:
    """A file to open, or "" if the user cancelled."""
    path, _ = QFileDialog.getOpenFileName(parent, title, last_folder(parent, purpose), filters)
    remember(parent, purpose, path)
    return path


def open_folder(parent: QWidget, purpose: Purpose, title: str) -> str:
    """A folder to open, or "" if the user cancelled."""
    path = QFileDialog.getExistingDirectory(parent, title, last_folder(parent, purpose))
    remember(parent, purpose, path)
    return path


def save_file(parent: QWidget, purpose: Purpose, title: str, name: str, filters: str,
              selected_filter: str = "") -> tuple[str, str]:
    """(path, the filter chosen) to save to, proposing `name` in the folder last used for
    `purpose`; ("", "") if the user cancelled."""
    proposed = str(Path(last_folder(parent, purpose)) / name)
    path, chosen = QFileDialog.getSaveFileName(parent, title, proposed, filters, selected_filter)
    remember(parent, purpose, path)
    return (path, chosen) if path else ("", "")
