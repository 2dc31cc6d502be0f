"""WindowState: what the window remembers between sessions, kept in QSettings.

Geometry and dock layout, the last settings and the recently used models. Anything
unreadable (an older or hand-edited file) is ignored in favour of defaults.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSettings, QSize
from PySide6.QtWidgets import QMainWindow

from tflaunch.core.settings.config import LaunchConfig

RECENT_LIMIT = 10
PREFERRED_SIZE = QSize(1360, 860)  # the first window, where the screen has room for it


def fitted(available: QRect, wanted: QRect | QSize) -> QRect:
    """`wanted` (a geometry, or a size to centre) moved and shrunk to lie within the
    screen's available geometry: a first window on a 1024x700 screen, or a geometry saved
    on a larger monitor, never opens partly off the screen."""
    size = wanted.size() if isinstance(wanted, QRect) else wanted
    width, height = min(size.width(), available.width()), min(size.height(), available.height())
    if isinstance(wanted, QRect):
        x = min(max(wanted.x(), available.left()), available.left() + available.width() - width)
        y = min(max(wanted.y(), available.top()), available.top() + available.height() - height)
    else:
        x = available.left() + (available.width() - width) // 2
        y = available.top() + (available.height() - height) // 2
    return QRect(x, y, width, height)


class WindowState:
    def __init__(self, settings: QSettings) -> None:
        self.settings = settings

    def restore_layout(self, window: QMainWindow) -> bool:
        """Geometry and docks as they were; False when there was nothing to restore."""
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if isinstance(geometry, QByteArray):
            window.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            window.restoreState(state)
        restored = isinstance(geometry, QByteArray) and isinstance(state, QByteArray)
        screen = window.screen()
        if screen is not None and not window.isMaximized() and not window.isFullScreen():
            available = screen.availableGeometry()
            window.setGeometry(fitted(available, window.geometry() if restored else PREFERRED_SIZE))
        elif not restored:
            window.resize(PREFERRED_SIZE)
        return restored

    def save_layout(self, window: QMainWindow) -> None:
        self.settings.setValue("window/geometry", window.saveGeometry())
        self.settings.setValue("window/state", window.saveState())

    def last_config(self) -> LaunchConfig | None:
        try:
            value = self.settings.value("run/config", "")
            saved = json.loads(value if isinstance(value, str) and value else "null")
            config = LaunchConfig.from_dict(saved) if isinstance(saved, dict) else None
        except (ValueError, TypeError, OverflowError, RecursionError):
            return None  # unreadable settings: start from defaults
        # A value out of range (an edited file) would not fit the form's fields: defaults
        # then. A model or interpreter gone since is kept, for the form to point out.
        if config is None or [p for p in config.validate(check_model=False) if p.field not in ("python", "imports")]:
            return None
        return config

    def save_config(self, config: LaunchConfig) -> None:
        self.settings.setValue("run/config", json.dumps(config.to_dict()))

    def recent_models(self) -> list[str]:
        value = self.settings.value("run/recent_models", "[]")
        try:
            recent = json.loads(value) if isinstance(value, str) else []
        except ValueError:
            recent = []
        return [m for m in recent if isinstance(m, str)]

    def remember_model(self, model: str) -> list[str]:
        """Put a model first in the recent list (samples are always listed anyway)."""
        recent = self.recent_models()
        if not model.startswith("sample:"):
            recent = [model, *[m for m in recent if m != model]][:RECENT_LIMIT]
            self.settings.setValue("run/recent_models", json.dumps(recent))
        return recent

    def settings_path(self) -> Path:
        """The file these settings live in (on Linux ~/.config/tflaunch/tflaunch.conf)."""
        return Path(self.settings.fileName())

    def sync(self) -> None:
        self.settings.sync()

    def last_script(self) -> tuple[str, str, bool]:
        """The Launch script dialog's last script, arguments and Warm choice."""
        script, arguments = self.settings.value("script/path", ""), self.settings.value("script/arguments", "")
        warm = self.settings.value("script/warm", "false")
        return (script if isinstance(script, str) else "", arguments if isinstance(arguments, str) else "",
                str(warm).lower() == "true")

    def save_script(self, script: str, arguments: str, warm: bool) -> None:
        self.settings.setValue("script/path", script)
        self.settings.setValue("script/arguments", arguments)
        self.settings.setValue("script/warm", "true" if warm else "false")
