"""RunController: starts, watches and stores the app's runs (the model, or a user's script).

The launch check, the session and the recorder are core's, the same ones the command
line uses; this owns the one ProbeProcess of the moment and says what happens to it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from tflaunch.core.paths import cache_dir
from tflaunch.core.run.gpus.nvml import GpuMemorySampler
from tflaunch.core.run.launch_check import cached_known_flags, launch_check
from tflaunch.core.settings.config import LaunchConfig, Problem
from tflaunch.core.store.history import History
from tflaunch.core.store.recorder import RunRecorder

if TYPE_CHECKING:
    from tflaunch.core.run.record import RunRecord

    from ..adapters.probe_process import ProbeProcess


class RunController(QObject):
    phase_changed = Signal(object)  # RunRecord
    sampled = Signal(list)  # [(seconds since launch, RSS bytes, {gpu: bytes})], a batch per tick
    log_lines = Signal(list)
    run_finished = Signal(object)  # RunRecord
    history_problem = Signal(str)  # a run is not stored: which file, why, what to do

    def __init__(self, history: History | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.gpu_sampler: GpuMemorySampler | None = None
        self.process: ProbeProcess | None = None
        self.not_stored: str | None = None  # why the last run is not in the history, when it is not
        self.profile: tuple[RunRecord, Path] | None = None  # the last anatomy run and where its profile is
        self._recorder = RunRecorder(history, "gui", self._on_history_problem)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.running

    @property
    def record(self) -> RunRecord | None:
        return self.process.record if self.process is not None else None

    @staticmethod
    def check(config: LaunchConfig) -> list[Problem]:
        """The launch check, with TF_XLA_FLAGS checked against the flags already learned
        for the interpreter (learning scans TensorFlow for seconds: never here)."""
        return launch_check(config, known=cached_known_flags)

    def start(self, config: LaunchConfig, warm: bool = False, anatomy: bool = False) -> RunRecord | None:
        """Start a run of the model or the program (`warm`, a program: forked from a warm
        server that has imported TensorFlow, or cold saying why;
        `anatomy`: an extra run with TensorFlow's profiler on, its first step or call in parts)."""
        if self.running:
            return None
        self.not_stored = None
        # The engine (session, driver, sampler, warm servers) is imported at the first launch:
        # the window's first frame never uses it, and it was some 30 ms of that frame.
        from tflaunch.core.run.session import ProbeSession

        from ..adapters.probe_process import ProbeProcess

        written = self._profile_folder() if anatomy else None
        session = ProbeSession(config, warm=warm, anatomy=anatomy, keep_trace=str(written) if written else None)
        process = ProbeProcess(session, self, self.gpu_sampler, self._recorder)
        process.event_applied.connect(self.phase_changed)
        process.sampled.connect(self.sampled)
        process.log_lines.connect(self.log_lines)
        process.finished.connect(self._on_finished)
        self.process = process
        process.start()
        if written is not None:
            self.profile = (process.record, written)
        return process.record

    @staticmethod
    def _profile_folder() -> Path:
        """The one folder an anatomy run's profile is kept in, for "Keep profile for
        TensorBoard…": emptied for each anatomy run, so at most one profile is kept."""
        folder = cache_dir() / "anatomy-profile"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def cancel(self) -> None:
        if self.process is not None:
            self.process.cancel()

    def _on_history_problem(self, message: str) -> None:
        self.not_stored = message[:1].upper() + message[1:]
        self.history_problem.emit(self.not_stored)

    def _on_finished(self, record: RunRecord) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.deleteLater()
        self.run_finished.emit(record)
