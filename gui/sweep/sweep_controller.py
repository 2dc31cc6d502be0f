"""SweepController: the app's driver of a SweepSession, one trial's ProbeProcesses at a time.

The decisions and the storing are core's SweepSession, the same one `tflaunch sweep`
drives; this only prepares it off the GUI thread (core's prepare, which converts the model
when format varies, as the command line does) and starts processes when a trial is due.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from tflaunch.core.run.gpus.nvml import GpuMemorySampler
from tflaunch.core.run.launch_check import cached_known_flags
from tflaunch.core.store.history import History

if TYPE_CHECKING:  # the sweep's plan and engine are imported when a sweep starts, never for the first frame
    from tflaunch.core.run.record import RunRecord
    from tflaunch.core.sweep.plan import Candidate, Sweep, SweepPlan, Trial
    from tflaunch.core.sweep.session import SweepSession

    from ..adapters.probe_process import ProbeProcess


class SweepController(QObject):
    preparing = Signal(str)  # what is being prepared
    failed_to_start = Signal(str)  # why
    progressed = Signal(object, object)  # Sweep, the Trial that just ended
    trial_started = Signal(object, object)  # Trial, its first RunRecord
    finished = Signal(object, str)  # Sweep, status: done or cancelled
    history_problem = Signal(str)
    _prepared = Signal(int, object, object)  # preparation number, candidates or an error message, plan

    def __init__(self, history: History | None, parent: QObject | None = None,
                 gpu_sampler: GpuMemorySampler | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.gpu_sampler = gpu_sampler
        self.session: SweepSession | None = None
        self.started_at = 0.0
        self._trial: Trial | None = None
        self._processes: list[ProbeProcess] = []
        self._cancelled = False
        self._preparation = 0  # numbers each start: a result from an abandoned one is ignored
        self._preparing = False
        self._prepared.connect(self._on_prepared)

    @property
    def sweep(self) -> Sweep | None:
        return self.session.sweep if self.session else None

    @property
    def sweep_id(self) -> int | None:
        return self.session.sweep_id if self.session else None

    @property
    def running(self) -> bool:
        """Preparing or running trials: either way the app is busy with this sweep."""
        return self._preparing or (self.session is not None and self.session.status == "running")

    def start(self, plan: SweepPlan) -> None:
        """Prepare (converting the model if format varies) off the GUI thread, then check
        every setting and run."""
        self._cancelled = False
        self.session = None
        self._preparation += 1
        self._preparing = True
        formats = plan.axes.get("format")
        self.preparing.emit(f"Preparing: saving {plan.base.model} as {', '.join(formats)} (converted once, "
                            "then kept for later sweeps)…" if formats else "Preparing…")
        number = self._preparation
        from tflaunch.core.run.formats import ConversionError
        from tflaunch.core.sweep.plan import PlanError
        from tflaunch.core.sweep.session import prepare

        def work() -> None:
            try:
                self._prepared.emit(number, prepare(plan), plan)
            except (PlanError, ConversionError, OSError) as exc:
                self._prepared.emit(number, str(exc), plan)

        threading.Thread(target=work, name="tflaunch-sweep-prepare", daemon=True).start()

    def cancel(self) -> None:
        self._cancelled = True
        if self._preparing:  # at once: a conversion may take minutes; its result is ignored, its files kept
            self._preparing = False
            self.failed_to_start.emit("cancelled while preparing; a conversion still under way finishes in the "
                                      "background and is kept for the next sweep")
            return
        for process in self._processes:
            process.cancel()
        if not self._processes and self.running:
            self._end("cancelled")

    def _on_prepared(self, number: int, candidates: list[Candidate] | str, plan: SweepPlan) -> None:
        if number != self._preparation or not self._preparing:
            return  # cancelled, or a later sweep started meanwhile
        self._preparing = False
        if isinstance(candidates, str):
            self.failed_to_start.emit(candidates)
            return
        from tflaunch.core.sweep.session import SweepSession, refusal

        # Only flags already learned: nothing here may wait for a scan.
        why = refusal(candidates, known=cached_known_flags)
        if why:
            self.failed_to_start.emit(why)
            return
        self.session = SweepSession(plan, candidates, self.history, self.history_problem.emit)
        self.started_at = time.monotonic()
        self._next()

    def _next(self) -> None:
        assert self.session is not None
        due = self.session.next_trial()
        if due is None:
            self._end("done")
            return
        self._trial, sessions = due
        from ..adapters.probe_process import ProbeProcess

        self._processes = [ProbeProcess(s, self, self.gpu_sampler, self.session.recorder) for s in sessions]
        for process in self._processes:
            process.finished.connect(self._on_instance_finished)
        for process in self._processes:  # started together: the contention N processes see
            process.start()
        self.trial_started.emit(self._trial, self._processes[0].record)

    def _on_instance_finished(self, _record: RunRecord) -> None:
        if any(p.running for p in self._processes) or self.session is None or self._trial is None:
            return
        records = [p.record for p in self._processes]
        for process in self._processes:
            process.deleteLater()
        self._processes = []
        trial, self._trial = self._trial, None
        if self._cancelled or any(r.status.value == "cancelled" for r in records):
            self._end("cancelled")
            return
        self.session.trial_done(trial, records)
        self.progressed.emit(self.session.sweep, trial)
        self._next()

    def _end(self, status: str) -> None:
        assert self.session is not None
        self._trial = None
        self.session.end(status)
        self.finished.emit(self.session.sweep, status)

    def seconds_left(self) -> float | None:
        """Time left if every remaining trial runs (racing may end sooner)."""
        sweep = self.sweep
        if not sweep or not sweep.trials_run:
            return None
        per_trial = (time.monotonic() - self.started_at) / sweep.trials_run
        return per_trial * max(0, sweep.planned_without_racing - sweep.trials_run)
