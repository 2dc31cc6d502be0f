"""The window's actions, menus and toolbar, with their shortcuts in one place."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMessageBox

TABS = ("Run", "History", "Compare", "Profiles", "Sweep")


def _review_actions():
    """Imported on first use: review rendering (QtSvg, exporters) stays off the start-up path."""
    from . import review_actions

    return review_actions


class WindowActions:
    """Builds the actions on a MainWindow; keeps the ones the window enables and disables."""

    def __init__(self, w: QMainWindow) -> None:
        self.window = w
        self.run = QAction("&Run", w, shortcut=QKeySequence("Ctrl+R"), triggered=w.start_run)
        self.run.setToolTip("Start the probe with these settings (Ctrl+R)")
        self.cancel = QAction("&Cancel", w, shortcut=QKeySequence(Qt.Key.Key_Escape),
                              triggered=w.cancel_run, enabled=False)
        self.cancel.setToolTip("Stop the run and everything it started (Esc)")
        open_file = QAction("Open model &file…", w, shortcut=QKeySequence.StandardKey.Open,
                            triggered=w.panel.browse_model_file)
        open_dir = QAction("Open &SavedModel folder…", w, shortcut=QKeySequence("Ctrl+Shift+O"),
                           triggered=w.panel.browse_model_dir)
        quit_action = QAction("&Quit", w, shortcut=QKeySequence.StandardKey.Quit, triggered=w.close)
        export_review = QAction("&Export review image…", w, shortcut=QKeySequence("Ctrl+Shift+E"),
                                triggered=lambda: _review_actions().export_review(w))
        export_review.setToolTip("One self-explanatory image (or SVG, Markdown, CSV) of what this tab shows")
        copy_review = QAction("&Copy review image", w, shortcut=QKeySequence("Ctrl+Shift+C"),
                              triggered=lambda: _review_actions().copy_review(w))
        toggle_log = w.log_dock.toggleViewAction()
        toggle_log.setShortcut(QKeySequence("Ctrl+L"))
        toggle_runs = w.runs_dock.toggleViewAction()
        about = QAction("&About tflaunch", w, triggered=self._about)
        self.save_profile = QAction("&Save run as profile…", w, shortcut=QKeySequence.StandardKey.Save,
                                    triggered=w.save_shown_run_as_profile)
        self.save_profile.setToolTip("Keep these settings, with this run as evidence (Ctrl+S)")
        self.script = QAction("&Launch script…", w, shortcut=QKeySequence("Ctrl+Shift+R"),
                              triggered=w.ask_script)
        self.script.setToolTip("Start your own script with these settings applied, "
                               "with its memory graph and a record in History (Ctrl+Shift+R)")
        tab_actions = []
        for index, name in enumerate(TABS):
            action = QAction(f"{name} view", w, shortcut=QKeySequence(f"Ctrl+{index + 1}"),
                             triggered=lambda _checked=False, i=index: w.tabs.setCurrentIndex(i))
            tab_actions.append(action)

        menu = w.menuBar()
        file_menu = menu.addMenu("&File")
        for action in (open_file, open_dir):
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(export_review)
        file_menu.addAction(copy_review)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        run_menu = menu.addMenu("&Run")
        run_menu.addAction(self.run)
        run_menu.addAction(self.cancel)
        run_menu.addAction(self.script)
        run_menu.addSeparator()
        run_menu.addAction(self.save_profile)
        view_menu = menu.addMenu("&View")
        for action in tab_actions:
            view_menu.addAction(action)
        view_menu.addSeparator()
        view_menu.addAction(toggle_log)
        view_menu.addAction(toggle_runs)
        menu.addMenu("&Help").addAction(about)
        self.toolbar = w.addToolBar("Run")
        self.toolbar.setObjectName("run_toolbar")
        self.toolbar.setMovable(False)
        self.toolbar.addAction(self.run)
        self.toolbar.addAction(self.cancel)
        self.toolbar.addAction(self.script)
        self.toolbar.addAction(self.save_profile)
        self.toolbar.addSeparator()
        self.toolbar.addAction(toggle_log)

    def set_busy(self, busy: bool) -> None:
        """While a run or sweep goes on, only Cancel starts nothing new."""
        for action in (self.run, self.script):
            action.setEnabled(not busy)
        self.cancel.setEnabled(busy)

    def _about(self) -> None:
        QMessageBox.about(self.window, "About tflaunch",
                          "<b>tflaunch</b><br>Measure and tune how TensorFlow models start.")
