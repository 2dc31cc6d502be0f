"""The window's actions, menus and toolbar, with their shortcuts in one place."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QWidget

from tflaunch.core.paths import history_path

if TYPE_CHECKING:
    from .about_dialog import AboutDialog
    from .window_host import WindowHost

TABS = ("Run", "History", "Compare", "Profiles", "Sweep", "Advisor")


def _review_actions():
    """Imported on first use: review rendering (QtSvg, exporters) stays off the start-up path."""
    from ..review import review_actions

    return review_actions


def _trace_actions():
    """Imported on first use, as the review's."""
    from . import trace_actions

    return trace_actions


def _tensorboard_actions():
    """Imported on first use, as the review's."""
    from . import tensorboard_actions

    return tensorboard_actions


def _action(parent: QWidget, text: str, slot: Callable[[], object],
            shortcut: QKeySequence | QKeySequence.StandardKey | None = None, tip: str | None = None) -> QAction:
    action = QAction(text, parent)
    if shortcut is not None:
        action.setShortcut(shortcut)
    if tip is not None:
        action.setToolTip(tip)
    action.triggered.connect(lambda _checked=False: slot())
    return action


class WindowActions:
    """Builds the actions on a MainWindow; keeps the ones the window enables and disables."""

    def __init__(self, w: WindowHost, widget: QMainWindow) -> None:
        """`w`: what the actions call; `widget`: the same window as the QMainWindow they live on."""
        self.window, self.widget = w, widget
        self.about_dialog: AboutDialog | None = None
        self.run = _action(widget, "&Run", w.start_run, QKeySequence("Ctrl+R"),
                           "Start the probe with these settings (Ctrl+R)")
        self.anatomy = _action(widget, "&Anatomy of the first step", w.start_anatomy, QKeySequence("Ctrl+Shift+A"),
                               "One extra run with TensorFlow's profiler on: the first step (or first call) in "
                               "parts — tracing, graph optimisation, XLA, variables, data, execution (Ctrl+Shift+A)")
        self.anatomy.setIconText("Anatomy")  # the toolbar's word: the window must fit 1024 px
        self.keep_profile = _action(widget, "&Keep profile for TensorBoard…",
                                    lambda: _tensorboard_actions().keep_for_tensorboard(w, widget),
                                    tip="Copy the anatomy run's TensorFlow profile into a log folder: "
                                        "tensorboard --logdir FOLDER, then its Profile tab")
        self.cancel = _action(widget, "&Cancel", w.cancel_run, QKeySequence(Qt.Key.Key_Escape),
                              "Stop the run and everything it started (Esc)")
        self.cancel.setEnabled(False)
        open_file = _action(widget, "Open model &file…", w.panel.browse_model_file, QKeySequence.StandardKey.Open)
        open_dir = _action(widget, "Open &SavedModel folder…", w.panel.browse_model_dir, QKeySequence("Ctrl+Shift+O"))
        open_cluster = _action(widget, "Open &Cluster Sweep…", w.sweep_actions.open_cluster, QKeySequence("Ctrl+Alt+O"),
                               "Follow a sweep submitted to Slurm from its shared folder (Ctrl+Alt+O)")
        quit_action = _action(widget, "&Quit", widget.close, QKeySequence.StandardKey.Quit)
        export_review = _action(widget, "&Export review image…", lambda: _review_actions().export_review(widget),
                                QKeySequence("Ctrl+Shift+E"),
                                "One self-explanatory image (or SVG, Markdown, CSV) of what this tab shows")
        copy_review = _action(widget, "&Copy review image", lambda: _review_actions().copy_review(widget),
                              QKeySequence("Ctrl+Shift+C"))
        self.export_trace = _action(widget, "Export as &trace…", lambda: _trace_actions().export_trace(w, widget),
                                    tip="The run shown, the runs compared or those selected in History as a "
                                        "Chrome trace for ui.perfetto.dev: phases, marks, memory, one track per run")
        toggle_log = w.log_dock.toggleViewAction()
        toggle_log.setShortcut(QKeySequence("Ctrl+L"))
        toggle_runs = w.runs_dock.toggleViewAction()
        self.about = _action(widget, "&About tflaunch", self.show_about,
                             tip="The version, the files tflaunch keeps and where, what it runs on")
        self.save_profile = _action(widget, "&Save run as profile…", w.stored_runs.save_shown_run,
                                    QKeySequence.StandardKey.Save,
                                    "Keep these settings, with this run as evidence (Ctrl+S)")
        self.script = _action(widget, "&Launch script…", w.ask_script, QKeySequence("Ctrl+Shift+R"),
                              "Start your own script with these settings applied, "
                              "with its memory graph and a record in History (Ctrl+Shift+R)")
        # The tabs' main buttons, reachable from the keyboard and the menu wherever the focus is.
        self.compare = _action(widget, "Co&mpare selected runs", w.stored_runs.compare_selected, QKeySequence("Ctrl+M"),
                               "Compare the runs selected in History, side against side (Ctrl+M)")
        self.sweep = _action(widget, "Start s&weep", w.sweep_actions.start_shown, QKeySequence("Ctrl+Shift+W"),
                             "Start the sweep planned in the Sweep tab (Ctrl+Shift+W)")
        self.examine = _action(widget, "E&xamine with the Advisor", w.examine, QKeySequence("Ctrl+Shift+X"),
                               "Let the Advisor try its remedies on these settings (Ctrl+Shift+X)")
        tab_actions = [_action(widget, f"{name} view", partial(w.tabs.setCurrentIndex, index),
                               QKeySequence(f"Ctrl+{index + 1}")) for index, name in enumerate(TABS)]

        menu = widget.menuBar()
        file_menu = menu.addMenu("&File")
        for action in (open_file, open_dir, open_cluster):
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(export_review)
        file_menu.addAction(copy_review)
        file_menu.addAction(self.export_trace)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        run_menu = menu.addMenu("&Run")
        run_menu.addAction(self.run)
        run_menu.addAction(self.anatomy)
        run_menu.addAction(self.keep_profile)
        run_menu.addAction(self.cancel)
        run_menu.addAction(self.script)
        run_menu.addSeparator()
        for action in (self.compare, self.sweep, self.examine):
            run_menu.addAction(action)
        run_menu.addSeparator()
        run_menu.addAction(self.save_profile)
        view_menu = menu.addMenu("&View")
        for action in tab_actions:
            view_menu.addAction(action)
        view_menu.addSeparator()
        view_menu.addAction(toggle_log)
        view_menu.addAction(toggle_runs)
        menu.addMenu("&Help").addAction(self.about)
        self.toolbar = widget.addToolBar("Run")
        self.toolbar.setObjectName("run_toolbar")
        self.toolbar.setMovable(False)
        self.toolbar.addAction(self.run)
        self.toolbar.addAction(self.anatomy)
        self.toolbar.addAction(self.cancel)
        self.toolbar.addAction(self.script)
        self.toolbar.addAction(self.save_profile)
        self.toolbar.addSeparator()
        self.toolbar.addAction(toggle_log)

    def set_busy(self, busy: bool, what: str | None = None, not_runnable: str = "") -> None:
        """While a run, sweep or the Advisor goes on, nothing new starts; Cancel ends it.
        `what` says which, and `not_runnable` why the chosen interpreter cannot run (its
        check failed), in the disabled actions' tooltips."""
        for action in (self.run, self.anatomy, self.script, self.sweep, self.examine):
            action.setEnabled(not busy and not not_runnable)
            default = action.property("tflaunch-tip")
            if default is None:
                action.setProperty("tflaunch-tip", action.toolTip())
                default = action.toolTip()
            action.setToolTip(f"Waits: {what}" if busy and what else f"Cannot run: {not_runnable}" if not_runnable
                              else str(default))
        self.cancel.setEnabled(busy)

    def show_about(self) -> None:
        """The About dialog, over the window (not modal: the paths in it can be copied meanwhile)."""
        from .about_dialog import AboutDialog

        w = self.window
        history = w.history.path if w.history is not None else history_path()
        history_note = ("Runs, their phases and memory samples (SQLite)" if w.history is not None
                        else "Runs, when it can be opened: this session does not keep them")
        files = [
            ("Profiles folder", w.profiles.folder, "Launch profiles, one TOML file each"),
            ("Accepted profiles", w.profiles.trust.path, "Which shared profiles you accepted to run code"),
            ("Run history", history, history_note),
            ("Window settings", w.state.settings_path(), "Window layout, last settings, recent models"),
        ]
        if self.about_dialog is not None:
            self.about_dialog.close()
            self.about_dialog.deleteLater()
        self.about_dialog = AboutDialog(files, self.widget)
        self.about_dialog.show()
