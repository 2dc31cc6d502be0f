"""MainWindow: settings on the left, the run in the middle, runs and log in docks."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QDockWidget, QInputDialog, QMainWindow, QScrollArea, QSplitter, QTabWidget, QWidget,
)

from tflaunch.core import gpus
from tflaunch.core.config import LaunchConfig
from tflaunch.core.history import History
from tflaunch.core.phases import LABELS
from tflaunch.core.profiles import Profile, ProfileError, ProfileStore, evidence_from_runs
from tflaunch.core.run import RunRecord, RunStatus
from tflaunch.core.sweep import PlanError, Sweep
from tflaunch.core.sweep_runner import winner_profile

from .compare_view import CompareView
from .history_view import HistoryView
from .interpreter_check import InterpreterCheck
from .log_pane import LogPane
from .probe_process import ProbeProcess
from .profiles_view import ProfilesView
from .run_list import RunList
from .run_view import RunView
from .script_dialog import ScriptDialog
from .sweep_controller import SweepController
from .sweep_view import SweepView
from .window_actions import WindowActions
from .window_state import WindowState
from .settings_panel import SettingsPanel

TICK_MS = 100
STORE_MS = 1000  # samples reach the history file at least this often: a crash loses at most this much


class MainWindow(QMainWindow):
    run_started = Signal(object)  # RunRecord
    run_finished = Signal(object)  # RunRecord

    def __init__(self, settings: QSettings, history: History | None, profiles: ProfileStore,
                 gpu_inventory=gpus.inventory, history_problem: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.profiles = profiles
        self._history_id: int | None = None
        self._samples_stored = 0
        self.setWindowTitle("tflaunch")
        self.setAcceptDrops(True)
        self.state = WindowState(settings)
        self._gpu_inventory = gpu_inventory
        self._gpu_sampler: gpus.GpuMemorySampler | None = None
        self.process: ProbeProcess | None = None

        self.panel = SettingsPanel()
        self.run_view = RunView()
        self.run_list = RunList()
        self.log = LogPane()
        self.history_view = HistoryView(history)
        self.compare_view = CompareView()
        self.profiles_view = ProfilesView(profiles)
        self.sweep_view = SweepView()
        self.sweeper = SweepController(history, self)
        self.tabs = QTabWidget()
        for widget, title in ((self.run_view, "&Run"), (self.history_view, "&History"),
                              (self.compare_view, "&Compare"), (self.profiles_view, "&Profiles"),
                              (self.sweep_view, "&Sweep")):
            self.tabs.addTab(widget, title.replace("&", ""))
        scroll = QScrollArea()
        scroll.setWidget(self.panel)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(self.panel.sizeHint().width() + 24)
        center = QSplitter(Qt.Orientation.Horizontal)
        center.addWidget(scroll)
        center.addWidget(self.tabs)
        center.setStretchFactor(1, 1)
        center.setChildrenCollapsible(False)
        self.setCentralWidget(center)
        self.runs_dock = self._dock("Runs in this session", self.run_list, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.log_dock = self._dock("Log", self.log, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.runs_dock, self.log_dock)
        self.runs_dock.raise_()

        self.actions = WindowActions(self)
        self.run_action, self.cancel_action = self.actions.run, self.actions.cancel
        self.script_action, self.save_profile_action = self.actions.script, self.actions.save_profile
        self.toolbar = self.actions.toolbar
        self.checker = InterpreterCheck(self)
        self.checker.checked.connect(self.panel.set_interpreter_info)
        self.panel.python_changed.connect(self.checker.check)
        self.run_list.run_selected.connect(self._on_run_selected)
        self.history_view.show_requested.connect(self._show_stored_run)
        self.history_view.rerun_requested.connect(self._rerun_stored)
        self.history_view.compare_requested.connect(self._compare_stored)
        self.history_view.save_profile_requested.connect(
            lambda ids: self.ask_profile_name([self.history.load(i) for i in ids]))
        self.compare_view.save_profile_requested.connect(self._save_best_of_comparison)
        self.profiles_view.apply_requested.connect(self.apply_profile)
        self.sweep_view.start_requested.connect(lambda _plan: self.start_sweep())
        self.sweep_view.cancel_requested.connect(self.sweeper.cancel)
        self.sweep_view.save_winner_requested.connect(self._save_sweep_winner)
        self.sweeper.preparing.connect(self.sweep_view.status.setText)
        self.sweeper.failed_to_start.connect(self._on_sweep_failed_to_start)
        self.sweeper.progressed.connect(lambda sweep, _t: self.sweep_view.show_progress(sweep, self.sweeper.seconds_left()))
        self.sweeper.finished.connect(self._on_sweep_finished)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self.run_view.refresh)
        self._store_tick = QTimer(self)
        self._store_tick.setInterval(STORE_MS)
        self._store_tick.timeout.connect(self._store_samples)
        self.statusBar().showMessage(history_problem or "Ready. Ctrl+R runs the model, Esc cancels.")
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

    # -- running -----------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return (self.process is not None and self.process.running) or self.sweeper.running

    def _checked_config(self, report, ignore: tuple[str, ...] = ()) -> LaunchConfig | None:
        """The panel's settings, or None with the reasons shown next to the controls and the
        first one handed to `report`."""
        config = self.panel.config()
        problems = [p for p in config.validate() if p.field not in ignore]
        self.panel.show_problems(problems)
        if problems:
            report(problems[0].message)
            return None
        return config

    def start_run(self) -> None:
        if self.running:
            return
        config = self._checked_config(lambda why: self.statusBar().showMessage(f"Cannot run: {why}"))
        if config is None:
            return
        self._remember_model(config.model)
        self.state.save_config(config)
        self._launch(ProbeProcess(config, self, gpu_sampler=self._gpu_sampler), f"{config.model}: {config.summary()}")

    def ask_script(self) -> None:
        dialog = ScriptDialog(self.panel.python.text(), self)
        if dialog.exec() == ScriptDialog.DialogCode.Accepted:
            self.start_script(dialog.argv())

    def start_script(self, argv: list[str]) -> None:
        """Run a user's script with the panel's settings applied, recorded as one span."""
        if self.running:
            return
        config = self._checked_config(lambda why: self.statusBar().showMessage(f"Cannot launch: {why}"),
                                      ignore=("model",))  # a script brings its own model
        if config is None:
            return
        process = ProbeProcess(config, self, gpu_sampler=self._gpu_sampler, script=argv)
        self._launch(process, " ".join(argv[1:]) + f" with {config.summary()}")

    def _launch(self, process: ProbeProcess, title: str) -> None:
        process.event_applied.connect(lambda _r: self.run_view.on_phase_change())
        process.sampled.connect(lambda t, rss, _gpu: self.run_view.memory.add_sample(t, rss))
        process.log_lines.connect(self.log.append_lines)
        process.finished.connect(self._on_finished)
        self.process = process
        self.tabs.setCurrentWidget(self.run_view)
        self.run_view.begin(process.record)
        self.log.begin(title)
        self._set_busy(True)
        self.statusBar().showMessage(f"Running {title}…")
        self._tick.start()
        process.start()
        self._begin_storing(process.record)
        self.run_started.emit(process.record)

    def cancel_run(self) -> None:
        if self.sweeper.running:
            self.statusBar().showMessage("Cancelling the sweep…")
            self.sweeper.cancel()
            return
        if self.running:
            phase = self.process.record.current_phase or "spawn"
            self.statusBar().showMessage(f"Cancelling during {LABELS[phase]}…")
            self.process.cancel()

    def _begin_storing(self, record: RunRecord) -> None:
        self._history_id, self._samples_stored = None, 0
        if self.history is not None:
            self._history_id = record.history_id = self.history.begin(record, "gui")
            self._store_tick.start()

    def _store_samples(self) -> None:
        if self.history is not None and self._history_id is not None and self.process is not None:
            new = self.process.record.samples[self._samples_stored:]
            self.history.add_samples(self._history_id, new)
            self._samples_stored += len(new)

    def _on_finished(self, record: RunRecord) -> None:
        self._tick.stop()
        self._store_tick.stop()
        if self.history is not None and self._history_id is not None:
            self.history.finish(self._history_id, record, self._samples_stored)
            self.history_view.refresh()
        self.run_view.show_record(record)
        self.log.show_end(record)
        self.run_list.add_record(record)
        if record.failure is not None:
            self.log_dock.show()
            self.log_dock.raise_()
        self._set_busy(False)
        self.statusBar().showMessage(record.headline)
        self.process.deleteLater()
        self.process = None
        self.run_finished.emit(record)

    def _on_run_selected(self, record: RunRecord) -> None:
        if self.running:
            return  # the live run keeps the view until it ends
        self.run_view.show_record(record)
        self.log.show_record(record)

    # -- sweeps ------------------------------------------------------------------------
    def start_sweep(self) -> None:
        if self.running:
            return
        refuse = lambda why: self.sweep_view.status.setText(f"Cannot start: {why}")  # noqa: E731
        base = self._checked_config(refuse)
        if base is None:
            return
        try:
            plan = self.sweep_view.plan(base)
            plan.candidates()  # check the plan before anything starts (formats are checked while preparing)
        except PlanError as exc:
            refuse(exc)
            return
        if self.run_view.record is not None and self.run_view.record.time_to_ready:
            self.sweep_view.trial_seconds = self.run_view.record.time_to_ready + 0.5
        self._set_busy(True)
        self.sweep_view.set_running(True)
        self.tabs.setCurrentWidget(self.sweep_view)
        self.sweeper.start(plan)

    def _on_sweep_failed_to_start(self, reason: str) -> None:
        self._set_busy(False)
        self.sweep_view.set_running(False)
        self.sweep_view.status.setText(f"Cannot start: {reason}")

    def _on_sweep_finished(self, sweep: Sweep, status: str) -> None:
        self._set_busy(False)
        self.sweep_view.finish(sweep, status)
        self.history_view.refresh()
        self.statusBar().showMessage(f"Sweep {status}: {sweep.trials_run} trials")

    def _save_sweep_winner(self) -> None:
        if self.sweeper.sweep is None or self.history is None or self.sweeper.sweep_id is None:
            return
        name = self._ask_profile_name("Save the winner as a profile")
        if name:
            self.save_sweep_winner(name)

    def save_sweep_winner(self, name: str) -> bool:
        return self._store_profile(lambda: winner_profile(name, self.sweeper.sweep, self.history, self.sweeper.sweep_id))

    def _set_busy(self, busy: bool) -> None:
        for action in (self.run_action, self.script_action):
            action.setEnabled(not busy)
        self.cancel_action.setEnabled(busy)

    # -- history, comparison and profiles ----------------------------------------------
    def _show_stored_run(self, run_id: int) -> None:
        record = self.history.load(run_id)
        self.run_view.show_record(record)
        self.log.show_record(record)
        self.tabs.setCurrentWidget(self.run_view)

    def _rerun_stored(self, run_id: int) -> None:
        self.use_config(self.history.load(run_id).config)
        self.start_run()

    def _compare_stored(self, run_ids: list[int]) -> None:
        self.compare_view.show_runs([self.history.load(i) for i in run_ids])
        self.tabs.setCurrentWidget(self.compare_view)

    def save_shown_run_as_profile(self) -> None:
        record = self.run_view.record
        if record is None or record.status is not RunStatus.OK:
            self.statusBar().showMessage("Save as profile needs a finished, successful run.")
            return
        self.ask_profile_name([record])

    def _save_best_of_comparison(self, runs: list[RunRecord], baseline: int) -> None:
        contenders = [r for i, r in enumerate(runs) if i != baseline and r.status is RunStatus.OK]
        if not contenders:
            self.statusBar().showMessage("No successful run besides the baseline to save.")
            return
        best = min(contenders, key=lambda r: r.time_to_ready or float("inf"))
        self.ask_profile_name([best], [runs[baseline]])

    def ask_profile_name(self, runs: list[RunRecord], baseline: list[RunRecord] = ()) -> None:
        name = self._ask_profile_name("Save as profile")
        if name:
            self.save_profile(name, runs, baseline)

    def save_profile(self, name: str, runs: list[RunRecord], baseline: list[RunRecord] = ()) -> bool:
        """Store runs' settings as a profile, with them as evidence."""
        return self._store_profile(lambda: Profile(name, runs[-1].config, evidence_from_runs(runs, baseline)))

    def _ask_profile_name(self, title: str) -> str | None:
        name, ok = QInputDialog.getText(self, title, "Profile name:")
        return name.strip() if ok and name.strip() else None

    def _store_profile(self, make_profile) -> bool:
        """Build and save a profile; a problem is shown in the status bar, never raised."""
        try:
            profile = make_profile()
            path = self.profiles.save(profile)
        except ProfileError as exc:
            self.statusBar().showMessage(f"Profile not saved: {exc}")
            return False
        self.profiles_view.refresh()
        self.statusBar().showMessage(f"Saved profile {profile.name} to {path}")
        return True

    def apply_profile(self, config: LaunchConfig) -> None:
        """Fill the settings panel; an interpreter from another machine is not taken over."""
        if config.python != self.panel.python.text() and not Path(config.python).exists():
            config = config.replace(python=self.panel.python.text())
        self.use_config(config)
        self.panel.show_problems(config.validate())
        self.statusBar().showMessage(f"Applied profile settings: {config.summary()}")

    # -- discovery and persistence -----------------------------------------------------
    def _discover(self) -> None:
        inventory = self._gpu_inventory()
        self.panel.set_gpus(inventory)
        self.panel.set_config(self._config_to_restore or self.panel.config())
        if inventory.available:
            self._gpu_sampler = gpus.GpuMemorySampler()
        self.checker.check(self.panel.python.text())

    def _restore(self) -> None:
        if not self.state.restore_layout(self):
            self.resize(1360, 860)
            # Docks take what the central widget leaves unless told; applied once shown.
            QTimer.singleShot(0, lambda: self.resizeDocks([self.runs_dock], [160], Qt.Orientation.Vertical))
        self.panel.set_recent_models(self.state.recent_models())
        self._config_to_restore = self.state.last_config()
        if self._config_to_restore is not None:
            self.panel.set_config(self._config_to_restore)

    def use_config(self, config: LaunchConfig) -> None:
        """Settings given on the command line win over the restored ones."""
        self._config_to_restore = config
        self.panel.set_config(config)

    def _remember_model(self, model: str) -> None:
        self.panel.set_recent_models(self.state.remember_model(model))
        self.panel.model.setCurrentText(model)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        if self.sweeper.running:
            self.sweeper.cancel()  # never leave a probe behind
        elif self.running:
            self.process.cancel()
        self.checker.stop()
        self.state.save_layout(self)
        self.state.save_config(self.panel.config())
        self.state.sync()
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
