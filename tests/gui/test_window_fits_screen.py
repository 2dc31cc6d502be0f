"""The window always lies on the screen: a first window on a small screen, and a geometry
saved on a larger monitor, are fitted to the screen's available geometry."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSettings, QSize

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import ProfileStore
from tflaunch.gui.adapters.window_state import PREFERRED_SIZE, fitted
from tflaunch.gui.shell.main_window import MainWindow

SMALL = QRect(0, 0, 1024, 700)


def test_a_first_window_on_a_small_screen_fits_it():
    assert fitted(SMALL, PREFERRED_SIZE) == SMALL
    assert fitted(QRect(0, 0, 1920, 1080), PREFERRED_SIZE) == QRect(280, 110, 1360, 860), "centred where it fits"
    assert fitted(QRect(0, 30, 1024, 670), QSize(800, 600)) == QRect(112, 65, 800, 600), "below a top panel"


def test_a_geometry_from_a_larger_monitor_is_moved_and_shrunk():
    assert fitted(SMALL, QRect(1500, 900, 1600, 1000)) == SMALL
    assert fitted(SMALL, QRect(-300, 200, 800, 600)) == QRect(0, 100, 800, 600)
    assert fitted(QRect(1920, 0, 1024, 700), QRect(0, 0, 900, 600)) == QRect(1920, 0, 900, 600), "a second screen"


def test_the_real_window_opens_within_the_screen_and_fits_a_small_one(qtbot, settings_file):
    saved = QSettings(str(settings_file), QSettings.Format.IniFormat)
    window = MainWindow(saved, History(history_path()), ProfileStore(profiles_dir()))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    available = window.screen().availableGeometry()
    assert available.contains(window.frameGeometry()) or available.contains(window.geometry())
    hint = window.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 700, f"the window cannot shrink to 1024x700: {hint}"

    window.setGeometry(QRect(3000, 2000, 2560, 1440))  # where a larger monitor left it
    window.close()
    again = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat), History(history_path()),
                       ProfileStore(profiles_dir()))
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert available.contains(again.geometry()), again.geometry()
