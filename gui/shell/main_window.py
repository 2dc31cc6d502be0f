"""MainWindow: the mediator between the settings, the controllers and the tabs.

It owns no logic of its own: runs belong to the RunController, sweeps to the
SweepController, profile saving to the ProfileSaver; each tab says itself what it would
export. The window connects their intents and keeps the status bar.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMessageBox, QScrollArea, QSplitter, QWidget

from tflaunch.core.phases import label
from tflaunch.core.report.subjects import own_config
from tflaunch.core.run.gpus import nvml as gpus
from tflaunch.core.run.launch_check import cached_known_flags, flags_to_check, launch_warnings
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.store.profile_subject import applied_to
from tflaunch.core.store.profiles import Profile, ProfileStore

from ..adapters.interpreter_check import InterpreterCheck
from ..adapters.window_state import WindowState
from ..profiles.profile_saver import ProfileSaver
from ..run.log_pane import LogPane
from ..run.run_controller import RunController
from ..run.run_list import RunList
from ..run.run_view import RunView
from ..settings.settings_panel import SettingsPanel
from ..sweep.sweep_controller import SweepController
from ..widgets import wheel_guard
from .dock_room import DockRoom
from .drop_target import DropTarget
from .first_paint import after_first_paint
from .import_ahead import import_ahead
from .lazy_tabs import LazyTabs
from .one_at_a_time import OneAtATime
from .stored_runs import StoredRuns
from .sweep_actions import SweepActions
from .window_actions import WindowActions

if TYPE_CHECKING:  # for types only: the hidden tabs' modules come after the first paint (import_ahead.py)
    from tflaunch.core.report.review import Review
    from tflaunch.core.run.record import RunRecord
    from tflaunch.core.sweep.plan import Sweep

    from ..advisor.advisor_view import AdvisorView
    from ..compare.compare_view import CompareView
    from ..history.history_view import HistoryView
    from ..profiles.profiles_view import ProfilesView
    from ..sweep.sweep_view import SweepView

TICK_MS = 100


class MainWindow(DropTarget, QMainWindow):  # DropTarget: a model or a script dropped on it
    run_started = Signal(object)  # RunRecord
    run_finished = Signal(object)  # RunRecord
    first_painted = Signal()  # the window's first frame is on screen; discovery starts next

    def __init__(self, settings: QSettings, history: History | None, profiles: ProfileStore,
                 gpu_inventory: Callable[[], gpus.GpuInventory] = gpus.inventory,
                 history_problem: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.profiles = profiles
        self.setWindowTitle("tflaunch")
        self.setAcceptDrops(True)
        self.state = WindowState(settings)
        self._gpu_inventory = gpu_inventory
        self.gpu_sampler: gpus.GpuMemorySampler | None = None
        self._config_to_restore: LaunchConfig | None = None
        self._flags_asked: set[str] = set()  # interpreters whose TF_XLA_FLAGS were asked for

        # The wheel guard's application-wide filter would see each of the thousands of events of
        # the build and the first paint; back after that paint (or in 2 s, for a window never shown).
        self._guard_back = wheel_guard.stand_aside(self)
        QTimer.singleShot(2000, self._guard_back)  # not tied to the window: back even if it is deleted
        self.panel = SettingsPanel()
        self.run_view = RunView(graphs_later=True)  # its two graphs right after the first paint
        self.run_list = RunList()
        self.log = LogPane()
        self.runner = RunController(history, self)
        self.sweeper = SweepController(history, self)
        self.one_at_a_time = OneAtATime(self)
        self.sweep_actions = SweepActions(self)
        self.stored_runs = StoredRuns(self)
        self.saver = ProfileSaver(profiles, self)
        self.tabs = LazyTabs()
        self._build_layout()
        # Only the Run tab is built for the first paint; the others when first shown or used.
        self.tabs.add_page("Run", self.run_view)
        self.tabs.add_lazy_page("History", self._build_history_view)
        self.tabs.add_lazy_page("Compare", self._build_compare_view)
        self.tabs.add_lazy_page("Profiles", self._build_profiles_view)
        self.tabs.add_lazy_page("Sweep", self._build_sweep_view)
        self.tabs.add_lazy_page("Advisor", self._build_advisor_view)
        self.window_actions = WindowActions(self, self)
        # The actions the toolbar and tests press.
        self.run_action, self.cancel_action = self.window_actions.run, self.window_actions.cancel
        self.script_action = self.window_actions.script
        self.toolbar = self.window_actions.toolbar
        self.checker = InterpreterCheck(self)
        self._connect()
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self.run_view.refresh)
        self.statusBar().showMessage(history_problem or "Ready. Ctrl+R starts a run, Esc cancels.")
        self._restore()
        # After the first paint: the window appears before any slow discovery work.
        after_first_paint(self, self._on_first_paint)

    # -- construction ------------------------------------------------------------------
    def _build_layout(self) -> None:
        # The frame first, then what it holds: each view moves once, into the window (a move
        # into a new parent re-polishes everything inside it).
        center = QSplitter(Qt.Orientation.Horizontal)
        self.setCentralWidget(center)
        scroll = QScrollArea()
        center.addWidget(scroll)
        center.addWidget(self.tabs)
        scroll.setWidget(self.panel)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # The panel's narrowest width (and its scroll bar): with the tabs' it fits a 1024 px screen.
        scroll.setMinimumWidth(self.panel.minimumSizeHint().width() + scroll.verticalScrollBar().sizeHint().width()
                               + 2 * scroll.frameWidth())
        center.setStretchFactor(1, 1)
        center.setChildrenCollapsible(False)
        self.runs_dock = self._dock("Runs in this session", self.run_list, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.log_dock = self._dock("Log", self.log, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.runs_dock, self.log_dock)
        self.runs_dock.raise_()
        self.dock_room = DockRoom(self, self.runs_dock, self.run_list, self.log_dock)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title.replace(" ", "_"))
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _connect(self) -> None:
        self.checker.checked.connect(self.panel.set_interpreter_info)
        self.panel.python_changed.connect(self.checker.check)
        self.panel.runnable_changed.connect(lambda *_: self.one_at_a_time.follow())  # Run waits for a good check
        self.checker.xla_flags_learned.connect(
            lambda python: self.say(f"TF_XLA_FLAGS of the TensorFlow of {python} read: runs can start."))
        self.runner.phase_changed.connect(lambda _r: self.run_view.on_phase_change())
        self.runner.phase_changed.connect(self._show_inputs)
        self.runner.sampled.connect(self.run_view.add_samples)
        self.runner.log_lines.connect(self.log.append_lines)
        self.runner.run_finished.connect(self._on_finished)
        self.runner.history_problem.connect(self.say)
        self.run_list.run_selected.connect(self._on_run_selected)
        self.saver.saved.connect(self._on_profile_saved)
        self.saver.message.connect(self.say)
        # The sweep view is built before any sweep starts (a sweep starts from it).
        self.sweeper.preparing.connect(lambda what: self.sweep_view.show_message(what))
        self.sweeper.failed_to_start.connect(self.sweep_actions.failed_to_start)
        self.sweeper.trial_started.connect(lambda trial, record: self.sweep_view.trial_started(trial, record))
        self.sweeper.progressed.connect(self._sweep_progressed)
        self.sweeper.finished.connect(self.sweep_actions.finished)
        self.sweeper.history_problem.connect(self.say)

    def _sweep_progressed(self, sweep: Sweep, _trial: object) -> None:
        self.sweep_view.show_progress(sweep, self.sweeper.seconds_left())
        self.say(f"Sweep running: {sweep.trials_run} trial{'s' * (sweep.trials_run != 1)} done. Esc cancels it.")

    # The hidden tabs, built (and connected) when first shown or used.
    @property
    def history_view(self) -> HistoryView:
        return cast("HistoryView", self.tabs.page("History"))

    @property
    def compare_view(self) -> CompareView:
        return cast("CompareView", self.tabs.page("Compare"))

    @property
    def profiles_view(self) -> ProfilesView:
        return cast("ProfilesView", self.tabs.page("Profiles"))

    @property
    def sweep_view(self) -> SweepView:
        return cast("SweepView", self.tabs.page("Sweep"))

    @property
    def advisor_view(self) -> AdvisorView:
        return cast("AdvisorView", self.tabs.page("Advisor"))

    def _build_advisor_view(self) -> QWidget:
        from ..advisor.advisor_view import AdvisorView

        advisor = AdvisorView(self.history, self.panel.config)
        advisor.save_requested.connect(self.saver.ask_and_save_diagnosis)
        advisor.busy_elsewhere = self.one_at_a_time.busy_with
        advisor.running_changed.connect(lambda _running: self._set_busy(self.running))
        # The status bar said the last run's "Ready in 6.02 s" for the minutes the Advisor measured.
        advisor.running_changed.connect(lambda running: self.say(
            "Advisor examining: its tab shows how far it is. Esc cancels it." if running
            else "Advisor finished: its tab says how it ended."))
        advisor.hold(self.one_at_a_time.busy_with())
        return advisor

    def _build_history_view(self) -> QWidget:
        from ..history.history_view import HistoryView

        history_view = HistoryView(self.history)
        history_view.show_requested.connect(self.stored_runs.show)
        history_view.rerun_requested.connect(self.stored_runs.rerun)
        history_view.compare_requested.connect(self.stored_runs.compare)
        history_view.save_profile_requested.connect(self.stored_runs.save)
        history_view.problem.connect(self.say)
        return history_view

    def _build_compare_view(self) -> QWidget:
        from ..compare.compare_view import CompareView

        compare_view = CompareView()
        compare_view.save_profile_requested.connect(self.saver.ask_and_save_best)
        compare_view.sweep_requested.connect(self.sweep_actions.sweep_compared)
        return compare_view

    def _build_profiles_view(self) -> QWidget:
        from ..profiles.profiles_view import ProfilesView

        profiles_view = ProfilesView(self.profiles)
        profiles_view.apply_requested.connect(self.apply_profile)
        return profiles_view

    def _build_sweep_view(self) -> QWidget:
        from ..sweep.sweep_view import SweepView

        sweep_view = SweepView(self.history)
        sweep_view.start_requested.connect(lambda _plan: self.start_sweep())
        sweep_view.cancel_requested.connect(self.sweeper.cancel)
        sweep_view.save_winner_requested.connect(self.sweep_actions.ask_and_save_winner)
        sweep_view.follow_settings(self.panel, self.panel.config)
        sweep_view.cluster_merged.connect(self.refresh_history)
        sweep_view.node_type_winner_requested.connect(self.sweep_actions.ask_and_save_node_type_winner)
        return sweep_view

    def refresh_history(self) -> None:
        """A History tab not built yet lists the runs when it is."""
        if self.tabs.is_built("History"):
            self.history_view.refresh()

    def _on_profile_saved(self, _name: str) -> None:
        if self.tabs.is_built("Profiles"):
            self.profiles_view.refresh()

    def say(self, message: str) -> None:
        self.statusBar().showMessage(message)

    def clear_status(self) -> None:
        self.statusBar().clearMessage()

    # -- running -----------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.one_at_a_time.busy_with() is not None

    def checked_config(self, report: Callable[[str], None], config: LaunchConfig | None = None) -> LaunchConfig | None:
        """The panel's settings (or `config`, made from them), or None with the reasons shown
        next to the controls and the first one handed to `report`."""
        if config is None:
            config = self.panel.config()
            # The form's own problems first: with them, the config is not what the user asked for.
            problems = self.panel.input_problems() or self.runner.check(config)
        else:
            problems = self.runner.check(config)
        self.panel.show_problems(problems)
        if problems:
            report(problems[0].message)
            return None
        if flags_to_check(config) and cached_known_flags(config.python) is None \
                and config.python not in self._flags_asked:
            # TensorFlow aborts on an unknown TF_XLA_FLAGS entry: learn its flags first.
            self._flags_asked.add(config.python)
            self.checker.learn_xla_flags(config.python)
            report("reading which TF_XLA_FLAGS this TensorFlow knows (once per install, a few seconds); "
                   "start again when the status bar says it is done.")
            return None
        return config

    def start_run(self, warm: bool = False) -> None:
        """Run the panel's subject; `warm` (a program): forked from a warm server that has
        already imported TensorFlow, or cold saying why."""
        if self.one_at_a_time.refuse(self.say):
            return
        config = self.checked_config(self._refuse_run)
        if config is None:
            return
        if not config.is_program:
            self._remember_model(config.model)
        self.state.save_config(config)
        self._launch(config, f"{config.subject}: {config.summary()}" + (" (warm)" if warm else ""), warm)

    def _refuse_run(self, why: str) -> None:
        """A run that cannot start says why where a run's outcome is read, not only below."""
        self.say(f"Cannot run: {why}")
        if not self.running:
            self.run_view.show_refusal(why)
            self.log.begin(f"Not started: {why}")  # not the last run's end below a refusal
            self.tabs.setCurrentWidget(self.run_view)
    def start_anatomy(self) -> None:
        """One extra run with TensorFlow's profiler on: the first step (a program) or first
        call (a model) in parts, shown as sub-rows of its phase; never a measured run."""
        if self.one_at_a_time.refuse(self.say):
            return
        config = self.checked_config(self._refuse_run)
        if config is None:
            return
        what = config.subject_type.first_work
        self._launch(config, f"anatomy of the {what} of {config.subject} (profiler on)", anatomy=True)

    def ask_script(self) -> None:
        from ..run.script_dialog import ScriptDialog

        dialog = ScriptDialog(self.panel.python.text(), self, self.state.last_script())
        if dialog.exec() == ScriptDialog.DialogCode.Accepted:
            self.state.save_script(*dialog.remembered())
            argv = dialog.argv()
            if argv:
                self.start_script(argv, warm=dialog.warm.isChecked())

    def start_script(self, argv: list[str], warm: bool = False) -> None:
        """Launch a user's script under the panel's settings, to its end (as `tflaunch run
        --profile` runs it), observed phase by phase by the one engine; `warm`: forked from a
        warm server that has already imported TensorFlow. The panel is left as it is."""
        if self.one_at_a_time.refuse(self.say):
            return
        script = own_config(self.panel.config().replace(program=("python", *argv[1:]), until="exit", workdir=""))
        config = self.checked_config(self._refuse_run, script)
        if config is not None:
            self._launch(config, f"{config.subject} to its end: {config.summary()}" + (" (warm)" if warm else ""),
                         warm)

    def _launch(self, config: LaunchConfig, title: str, warm: bool = False, anatomy: bool = False) -> None:
        self.tabs.setCurrentWidget(self.run_view)
        self.log.begin(title)
        self.say(f"Running {title}…")
        record = self.runner.start(config, warm, anatomy)
        self._set_busy(True)  # after the start: the controls follow what runs
        if record is None:
            return
        # Said before the first phase: a card this TensorFlow has no kernels for is not used.
        self.log.append_lines([f"tflaunch: warning: {w}" for w in launch_warnings(config)]
                              + [f"tflaunch: {n}" for n in record.launch_notes])
        if record.finished_at is None:
            self.run_view.begin(record)
            self._tick.start()
            self.run_started.emit(record)

    def cancel_run(self) -> None:
        if self.tabs.is_built("Advisor") and self.advisor_view.running:
            self.say("Cancelling the Advisor after the run in progress…")
            self.advisor_view.cancel()
            return
        if self.sweeper.running:
            self.say("Cancelling the sweep…")
            self.sweeper.cancel()
            return
        record = self.runner.record
        if self.runner.running and record is not None:
            self.say(f"Cancelling during {label(record.current_phase or 'spawn')}…")
            self.runner.cancel()

    def _on_finished(self, record: RunRecord) -> None:
        self._tick.stop()
        self.refresh_history()
        self.run_view.show_record(record)
        self.log.show_end(record)
        self.run_list.add_record(record)
        if record.failure is not None:
            self.log_dock.show()
            self.log_dock.raise_()
        self._set_busy(False)
        # A run the history could not keep says so, over its headline: it is still shown.
        self.say(record.headline + (f" — {self.runner.not_stored}" if self.runner.not_stored else ""))
        self.run_finished.emit(record)

    def _on_run_selected(self, record: RunRecord) -> None:
        if self.running:
            return  # the live run keeps the view until it ends
        self.clear_status()  # it spoke of the run shown before (or of a refusal)
        self.run_view.show_record(record)
        self.log.show_record(record)
        self._show_inputs(record)

    def _show_inputs(self, record: RunRecord) -> None:
        """The inputs table lists what the model declared, as soon as a run reports it."""
        declared = record.model.declared_inputs
        if declared is not None and self.panel.inputs_table.model != record.config.model:
            self.panel.show_model_inputs(record.config.model, declared)

    def _set_busy(self, _busy: bool) -> None:
        self.one_at_a_time.follow()

    # -- sweeps (sweep_actions.py) -----------------------------------------------------
    def start_sweep(self) -> None:
        self.sweep_actions.start()

    def examine(self) -> None:
        """Examine from the menu or Ctrl+Shift+X: the Advisor tab, started (or saying why not)."""
        self.tabs.setCurrentWidget(self.advisor_view)
        self.advisor_view.start()

    def save_sweep_winner(self, name: str) -> bool:
        return self.sweep_actions.save_winner(name)

    # -- history, comparison and profiles (stored_runs.py) ------------------------------
    def save_profile(self, name: str, runs: list[RunRecord], baseline: Sequence[RunRecord] = ()) -> bool:
        return self.saver.save_runs(name, runs, baseline)

    def apply_profile(self, profile: Profile) -> None:
        """Fill the settings panel with what the profile keeps (a program's profile leaves the
        subject and its command line as they are); an interpreter from another machine is not taken over."""
        config = applied_to(profile.config, profile.subject_type, self.panel.form_config())
        if config.python != self.panel.python.text() and not Path(config.python).exists():
            config = config.replace(python=self.panel.python.text())
        self.use_config(config)
        self.panel.show_problems(config.validate())
        self.say(f"Applied profile settings: {config.summary()}")

    def show_profile_problem(self, name: str | None, message: str) -> None:
        """A profile named at start could not be used: show it where it can be looked at
        (and accepted, for one that runs code), with the reason."""
        if name:
            self.profiles_view.select(name)
            self.tabs.setCurrentWidget(self.profiles_view)
        self.say(message.splitlines()[0])
        # Once the window is up: a box before it would stand alone on the desktop.
        QTimer.singleShot(0, lambda: QMessageBox.warning(self, "tflaunch", message))

    def current_review(self) -> Review | None:
        """What the current tab would export, if it shows something finished."""
        tab = self.tabs.currentWidget()
        review = getattr(tab, "review", None)
        return review() if callable(review) else None

    # -- discovery and persistence -----------------------------------------------------
    def _on_first_paint(self) -> None:
        self._guard_back()
        self.first_painted.emit()
        if self.isVisible():  # a window closed at its first paint has nothing to discover
            self._build_graphs()
            self._discover()
            import_ahead(self)  # what the first frame left out, before a first run or tab needs it

    def _build_graphs(self) -> None:
        with wheel_guard.paused(self.run_view):
            self.run_view.build_graphs()

    def _discover(self) -> None:
        inventory = self._gpu_inventory()
        self.panel.set_gpus(inventory)
        self.panel.set_config(self._config_to_restore or self.panel.form_config())
        if inventory.available:
            self.gpu_sampler = gpus.GpuMemorySampler()
            self.runner.gpu_sampler = self.gpu_sampler
        self.checker.check(self.panel.python.text())

    def _restore(self) -> None:
        self.state.restore_layout(self)  # or, in a first window, the preferred size fitted to the screen
        self.dock_room.fit()  # the session's run list starts empty, whatever height it had
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
        self._guard_back()  # closed before its first paint: the wheel guard is not left aside
        if self.sweeper.running:
            self.sweeper.cancel()  # never leave a probe behind
        elif self.runner.running:
            self.runner.cancel()
        if self.tabs.is_built("Advisor"):
            self.advisor_view.stop()
        self.checker.stop()
        self.state.save_layout(self)
        self.state.save_config(self.panel.form_config())
        self.state.sync()
        if self.gpu_sampler is not None:
            self.gpu_sampler.close()
        super().closeEvent(event)
