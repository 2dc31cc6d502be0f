"""What the window's helpers (its actions, the one-measurement rule, its part of a sweep)
need of the window, as a Protocol: they depend on this, the window on them, and no import
runs back from a helper to the window (Spyder's plugins know the shell only by its API)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtWidgets import QDockWidget

from tflaunch.core.run.gpus.nvml import GpuMemorySampler
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import ProfileStore

from ..adapters.window_state import WindowState
from ..advisor.advisor_view import AdvisorView
from ..compare.compare_view import CompareView
from ..history.history_view import HistoryView
from ..profiles.profile_saver import ProfileSaver
from ..run.log_pane import LogPane
from ..run.run_controller import RunController
from ..run.run_view import RunView
from ..settings.settings_panel import SettingsPanel
from ..sweep.sweep_controller import SweepController
from ..sweep.sweep_view import SweepView
from .lazy_tabs import LazyTabs


class BusyActions(Protocol):
    def set_busy(self, busy: bool, what: str | None = None, not_runnable: str = "") -> None: ...


class Measurements(Protocol):
    def busy_with(self) -> str | None: ...

    def refuse(self, say: Callable[[str], None]) -> bool: ...

    def follow(self) -> None: ...


class StoredRunActions(Protocol):
    def compare_selected(self) -> None: ...

    def save_shown_run(self) -> None: ...


class SweepMenuActions(Protocol):
    def start_shown(self) -> None: ...

    def open_cluster(self) -> None: ...


class WindowHost(Protocol):
    panel: SettingsPanel
    tabs: LazyTabs
    runner: RunController
    sweeper: SweepController
    history: History | None
    profiles: ProfileStore
    state: WindowState
    saver: ProfileSaver
    log_dock: QDockWidget
    runs_dock: QDockWidget
    gpu_sampler: GpuMemorySampler | None
    run_view: RunView
    log: LogPane

    # Read-only: the window holds the concrete helpers, which only need to behave so.
    @property
    def window_actions(self) -> BusyActions: ...

    @property
    def one_at_a_time(self) -> Measurements: ...

    @property
    def stored_runs(self) -> StoredRunActions: ...

    @property
    def sweep_actions(self) -> SweepMenuActions: ...

    @property
    def sweep_view(self) -> SweepView: ...

    @property
    def history_view(self) -> HistoryView: ...

    @property
    def compare_view(self) -> CompareView: ...

    @property
    def advisor_view(self) -> AdvisorView: ...

    def start_run(self, warm: bool = False) -> None: ...

    def cancel_run(self) -> None: ...

    def ask_script(self) -> None: ...

    def start_anatomy(self) -> None: ...

    def examine(self) -> None: ...

    def checked_config(self, report: Callable[[str], None],
                       config: LaunchConfig | None = None) -> LaunchConfig | None: ...

    def refresh_history(self) -> None: ...

    def say(self, message: str) -> None: ...

    def clear_status(self) -> None: ...

    def use_config(self, config: LaunchConfig) -> None: ...
