"""The real main window, offscreen, with its settings in a temporary file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QSettings
from PySide6.QtWidgets import QApplication

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.run.gpus.nvml import GpuInventory
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import ProfileStore
from tflaunch.gui.app import create_app
from tflaunch.gui.shell.main_window import MainWindow

NO_GPU = GpuInventory((), None, "No NVIDIA driver found (NVML: NVML Shared Library Not Found).")
# `make screenshots` sets this to resources/screenshots to refresh the README's pictures.
SCREENSHOT_COPY_ENV = "TFLAUNCH_SCREENSHOTS"


@pytest.fixture
def settings_file(tmp_path) -> Path:
    return tmp_path / "settings.ini"


@pytest.fixture
def make_window(qtbot, settings_file):
    create_app()

    def make(inventory: GpuInventory = NO_GPU, size: tuple[int, int] | None = (1360, 860)) -> MainWindow:
        window = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat),
                            History(history_path()), ProfileStore(profiles_dir()),
                            gpu_inventory=lambda: inventory)
        qtbot.addWidget(window)
        if size is not None:
            window.resize(*size)
        window.show()
        qtbot.waitExposed(window)
        qtbot.waitUntil(lambda: window.panel.python_status.text() != "Checking…", timeout=30000)
        return window

    return make


@pytest.fixture
def window(make_window) -> MainWindow:
    return make_window()


@pytest.fixture
def screenshot(tmp_path):
    """Save a PNG of a widget under the test's folder (and the README's, when asked)."""
    folder = tmp_path / "screenshots"
    folder.mkdir()

    def shoot(widget, name: str) -> Path:
        path = folder / f"{name}.png"
        # As a user sees it: the layouts a change just asked for are done before the grab
        # (a label given longer text still had its old height otherwise).
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        assert widget.grab().save(str(path)), path
        if os.environ.get(SCREENSHOT_COPY_ENV):
            target = Path(os.environ[SCREENSHOT_COPY_ENV])
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target / path.name)
        return path

    return shoot
