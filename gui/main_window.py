"""MainWindow: settings on the left, the run in the middle, runs and log in docks."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMessageBox, QScrollArea, QSplitter, QWidget

from tflaunch.core import gpus
from tflaunch.core.config import LaunchConfig
from tflaunch.core.phases import LABELS
from tflaunch.core.run import RunRecord

from .interpreter_check import InterpreterCheck
from .log_pane import LogPane
from .probe_process import ProbeProcess
from .run_list import RunList
from .run_view import RunView
from .settings_panel import RECENT_LIMIT, SettingsPanel

TICK_MS = 100


class MainWindow(QMainWindow):
    run_started = Signal(object)  # RunRecord
    run_finished = Signal(object)  # RunRecord

    def __init__(self, settings: QSettings, gpu_inventory=gpus.inventory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("tflaunch")
        self.setAcceptDrops(True)
        self._settings = settings
        self._gpu_inventory = gpu_inventory
        self._gpu_sampler: gpus.GpuMemorySampler | None = None
        self.process: ProbeProcess | None = None

        self.panel = SettingsPanel()
        self.run_view = RunView()
        self.run_list = RunList()
        self.log = LogPane()
        scroll = QScrollArea()
        scroll.setWidget(self.panel)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(self.panel.sizeHint().width() + 24)
        center = QSplitter(Qt.Orientation.Horizontal)
        center.addWidget(scroll)
        center.addWidget(self.run_view)
        center.setStretchFactor(1, 1)
        center.setChildrenCollapsible(False)
        self.setCentralWidget(center)
        self.runs_dock = self._dock("Runs in this session", self.run_list, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.log_dock = self._dock("Log", self.log, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.runs_dock, self.log_dock)
        self.runs_dock.raise_()

        self._build_actions()
        self.checker = InterpreterCheck(self)
        self.checker.checked.connect(self.panel.set_interpreter_info)
        self.panel.python_changed.connect(self.checker.check)
        self.run_list.run_selected.connect(self._on_run_selected)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self.run_view.refresh)
        self.statusBar().showMessage("Ready. Ctrl+R runs the model, Esc cancels.")
        self._restore()
        # After the first paint: the window appears before any slow discovery work.
        QTimer.singleShot(0, self._discover)

    # -- construction ------------------------------------------------------------------
    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title.replace(" ", "_"))
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_actions(self) -> None:
        self.run_action = QAction("&Run", self, shortcut=QKeySequence("Ctrl+R"), triggered=self.start_run)
        self.run_action.setToolTip("Start the probe with these settings (Ctrl+R)")
        self.cancel_action = QAction("&Cancel", self, shortcut=QKeySequence(Qt.Key.Key_Escape),
                                     triggered=self.cancel_run, enabled=False)
        self.cancel_action.setToolTip("Stop the run and everything it started (Esc)")
        open_file = QAction("Open model &file…", self, shortcut=QKeySequence.StandardKey.Open,
                            triggered=self.panel.browse_model_file)
        open_dir = QAction("Open &SavedModel folder…", self, shortcut=QKeySequence("Ctrl+Shift+O"),
                           triggered=self.panel.browse_model_dir)
        quit_action = QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit, triggered=self.close)
        toggle_log = self.log_dock.toggleViewAction()
        toggle_log.setShortcut(QKeySequence("Ctrl+L"))
        toggle_runs = self.runs_dock.toggleViewAction()
        about = QAction("&About tflaunch", self, triggered=self._about)

        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        for action in (open_file, open_dir):
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)
        run_menu = menu.addMenu("&Run")
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.cancel_action)
        view_menu = menu.addMenu("&View")
        view_menu.addAction(toggle_log)
        view_menu.addAction(toggle_runs)
        menu.addMenu("&Help").addAction(about)
        self.toolbar = self.addToolBar("Run")
        self.toolbar.setObjectName("run_toolbar")
        self.toolbar.setMovable(False)
        self.toolbar.addAction(self.run_action)
        self.toolbar.addAction(self.cancel_action)
        self.toolbar.addSeparator()
        self.toolbar.addAction(toggle_log)

    # -- running -----------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.process is not None and self.process.running

    def start_run(self) -> None:
        if self.running:
            return
        config = self.panel.config()
        problems = config.validate()
        self.panel.show_problems(problems)
        if problems:
            self.statusBar().showMessage(f"Cannot run: {problems[0].message}")
            return
        self._remember_model(config.model)
        self._save_config(config)
        process = ProbeProcess(config, self, gpu_sampler=self._gpu_sampler)
        process.event_applied.connect(lambda _r: self.run_view.on_phase_change())
        process.sampled.connect(lambda t, rss, _gpu: self.run_view.memory.add_sample(t, rss))
        process.stderr_lines.connect(self.log.append_lines)
        process.finished.connect(self._on_finished)
        self.process = process
        self.run_view.begin(process.record)
        self.log.begin(f"{config.model}: {config.summary()}")
        self.run_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        self.statusBar().showMessage(f"Running {config.model}…")
        self._tick.start()
        process.start()
        self.run_started.emit(process.record)

    def cancel_run(self) -> None:
        if self.running:
            phase = self.process.record.current_phase or "spawn"
            self.statusBar().showMessage(f"Cancelling during {LABELS[phase]}…")
            self.process.cancel()

    def _on_finished(self, record: RunRecord) -> None:
        self._tick.stop()
        self.run_view.show_record(record)
        self.log.show_end(record)
        self.run_list.add_record(record)
        if record.failure is not None:
            self.log_dock.show()
            self.log_dock.raise_()
        self.run_action.setEnabled(True)
        self.cancel_action.setEnabled(False)
        self.statusBar().showMessage(record.headline)
        self.process.deleteLater()
        self.process = None
        self.run_finished.emit(record)

    def _on_run_selected(self, record: RunRecord) -> None:
        if self.running:
            return  # the live run keeps the view until it ends
        self.run_view.show_record(record)
        self.log.show_record(record)

    # -- discovery and persistence -----------------------------------------------------
    def _discover(self) -> None:
        inventory = self._gpu_inventory()
        self.panel.set_gpus(inventory)
        self.panel.set_config(self._config_to_restore or self.panel.config())
        if inventory.available:
            self._gpu_sampler = gpus.GpuMemorySampler()
        self.checker.check(self.panel.python.text())

    def _restore(self) -> None:
        geometry = self._settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:
            self.resize(1360, 860)
        state = self._settings.value("window/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        else:
            # Docks take what the central widget leaves unless told; applied once shown.
            QTimer.singleShot(0, lambda: self.resizeDocks([self.runs_dock], [160], Qt.Orientation.Vertical))
        self.panel.set_recent_models(self._recent_models())
        self._config_to_restore = None
        try:
            saved = json.loads(self._settings.value("run/config", "") or "null")
            if isinstance(saved, dict):
                self._config_to_restore = LaunchConfig.from_dict(saved)
        except (ValueError, TypeError):
            self._config_to_restore = None  # unreadable settings: start from defaults
        if self._config_to_restore is not None:
            self.panel.set_config(self._config_to_restore)

    def use_config(self, config: LaunchConfig) -> None:
        """Settings given on the command line win over the restored ones."""
        self._config_to_restore = config
        self.panel.set_config(config)

    def _recent_models(self) -> list[str]:
        value = self._settings.value("run/recent_models", "[]")
        try:
            recent = json.loads(value) if isinstance(value, str) else []
        except ValueError:
            recent = []
        return [m for m in recent if isinstance(m, str)]

    def _remember_model(self, model: str) -> None:
        if model.startswith("sample:"):
            return
        recent = [model, *[m for m in self._recent_models() if m != model]][:RECENT_LIMIT]
        self._settings.setValue("run/recent_models", json.dumps(recent))
        self.panel.set_recent_models(recent)
        self.panel.model.setCurrentText(model)

    def _save_config(self, config: LaunchConfig) -> None:
        self._settings.setValue("run/config", json.dumps(config.to_dict()))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        if self.running:
            self.process.cancel()  # never leave a probe behind
        self.checker.stop()
        self._settings.setValue("window/geometry", self.saveGeometry())
        self._settings.setValue("window/state", self.saveState())
        self._save_config(self.panel.config())
        self._settings.sync()
        if self._gpu_sampler is not None:
            self._gpu_sampler.close()
        super().closeEvent(event)

    # -- drag and drop -----------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        urls = event.mimeData().urls()
        if len(urls) == 1 and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        path = Path(event.mimeData().urls()[0].toLocalFile())
        self.panel.model.setCurrentText(str(path))
        self.panel.show_problems(self.panel.config().validate())
        self.statusBar().showMessage(f"Model: {path}")
        event.acceptProposedAction()

    def _about(self) -> None:
        QMessageBox.about(self, "About tflaunch",
                          "<b>tflaunch</b><br>Measure and tune how TensorFlow models start.")
