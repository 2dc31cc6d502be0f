"""Creates the QApplication and the main window from the command line's arguments."""

from __future__ import annotations

import argparse
import os
import sys

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from tflaunch.core.cli.arguments import SettingsError, config_from_args
from tflaunch.core.paths import profiles_dir
from tflaunch.core.probe.process import process_age
from tflaunch.core.store.history import History, HistoryError, default_history
from tflaunch.core.store.profiles import ProfileStore
from tflaunch.resources import RESOURCES

from .shell.main_window import MainWindow
from .widgets import wheel_guard
from .widgets.palette import follow_desktop_palette

# Set by the start-up benchmark: print the process age at the first paint, then quit.
STARTUP_PROBE_ENV = "TFLAUNCH_EXIT_AFTER_PAINT"
DESKTOP_ID = "io.github.tflaunch.tflaunch"  # packaging/linux/DESKTOP_ID.desktop


def _report_first_paint(window: MainWindow) -> None:
    print(f"first-paint {process_age():.4f}", flush=True)
    window.close()  # the app ends as a user's would, before any discovery starts


def create_app(argv: list[str] | None = None) -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv[:1])
    app.setApplicationName("tflaunch")
    app.setOrganizationName("tflaunch")
    app.setApplicationDisplayName("tflaunch")
    # Once: a second setStyle deletes the style object that windows still alive (another
    # test's, a dialog's) point to, and Qt crashes on their next paint.
    # (style() is a style-sheet proxy once a sheet is set, so the app remembers it did it.)
    if app.property("tflaunch-style") != "Fusion":
        app.setStyle("Fusion")
        app.setProperty("tflaunch-style", "Fusion")
    # The installed desktop entry's name (Wayland matches windows to it) and its icon.
    app.setDesktopFileName(DESKTOP_ID)
    app.setWindowIcon(QIcon(str(RESOURCES / "tflaunch.svg")))
    # No application style sheet: with one, Qt polishes every widget through its style-sheet
    # style, which was half the window's build before its first paint (gui/widgets/text_roles.py).
    wheel_guard.install(app)
    # The caption colour now, while no widget exists to be told of a new palette.
    follow_desktop_palette()
    return app


def open_history() -> tuple[History | None, str | None]:
    """The user's history, or None when it cannot be used (locked, damaged, newer), and what
    the status bar says about it at start: the app starts whatever state the file is in."""
    try:
        history = default_history()
    except HistoryError as exc:
        return None, f"Runs will not be kept: {exc}"
    if history.read_only is not None:
        return history, f"Runs will be measured but not stored: {history.read_only}"
    if history.interrupted_on_open:
        count = history.interrupted_on_open
        return history, f"{count} run(s) were interrupted when tflaunch last stopped; see History."
    return history, None


def run_app(args: argparse.Namespace) -> int:
    app = create_app()
    history, problem = open_history()
    window = MainWindow(QSettings(), history, ProfileStore(profiles_dir()), history_problem=problem)
    settings_ok = True
    if args.model is not None or args.profile:
        try:
            window.use_config(config_from_args(args))
        except SettingsError as exc:  # the window opens anyway, saying why, at the profile
            settings_ok = False
            window.show_profile_problem(args.profile, exc.message)
    if os.environ.get(STARTUP_PROBE_ENV):
        window.first_painted.connect(lambda: _report_first_paint(window))
    if args.run and settings_ok:
        # Queued: it runs after the discovery that follows the first paint (GPUs, interpreter).
        window.first_painted.connect(lambda: QTimer.singleShot(0, window.start_run))
    window.show()
    return app.exec()
