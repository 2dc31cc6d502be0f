"""SweepController: runs a sweep's trials as ProbeProcesses, one trial at a time.

The decisions (order, racing, statistics) are core's Sweep; this only starts processes
when a trial is due and reports what they measured. Every trial is stored in the history
as it ends, so a cancelled sweep or a closed app keeps what it finished.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, Signal

from tflaunch.core.history import History
from tflaunch.core.model_formats import ConversionError
from tflaunch.core.run import RunRecord, RunStatus
from tflaunch.core.sweep import PlanError, Sweep, SweepPlan, Trial, verdict
from tflaunch.core.sweep_runner import prepare, trial_info, trial_value

from .probe_process import ProbeProcess


class SweepController(QObject):
    preparing = Signal(str)  # what is being prepared
    failed_to_start = Signal(str)  # why
    progressed = Signal(object, object)  # Sweep, the Trial that just ended
    trial_started = Signal(object, object)  # Trial, its first RunRecord
    finished = Signal(object, str)  # Sweep, status: done or cancelled
    _prepared = Signal(object, object)  # candidates or an error message, plan (from the worker thread)

    def __init__(self, history: History | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.sweep: Sweep | None = None
        self.sweep_id: int | None = None
        self.started_at = 0.0
        self._trial: Trial | None = None
        self._processes: list[ProbeProcess] = []
        self._cancelled = False
        self._prepared.connect(self._on_prepared)

    @property
    def running(self) -> bool:
        return self.sweep is not None and (self._trial is not None or bool(self._processes))

    def start(self, plan: SweepPlan) -> None:
        """Prepare (converting the model if format varies) off the GUI thread, then run."""
        self._cancelled = False
        self.preparing.emit("Preparing: converting the model into each format…" if "format" in plan.axes
                            else "Preparing…")

        def work() -> None:
            try:
                self._prepared.emit(prepare(plan), plan)
            except (PlanError, ConversionError, OSError) as exc:
                self._prepared.emit(str(exc), plan)

        threading.Thread(target=work, name="tflaunch-sweep-prepare", daemon=True).start()

    def cancel(self) -> None:
        self._cancelled = True
        for process in self._processes:
            process.cancel()
        if not self._processes and self.sweep is not None:
            self._end("cancelled")

    def _on_prepared(self, candidates, plan: SweepPlan) -> None:
        if isinstance(candidates, str):
            self.failed_to_start.emit(candidates)
            return
        if self._cancelled:
            return
        self.sweep = Sweep(plan, candidates)
        self.sweep_id = self.history.create_sweep(plan.base.model, plan.to_dict()) if self.history else None
        self.started_at = time.monotonic()
        self._next()

    def _next(self) -> None:
        trial = self.sweep.next_trial()
        if trial is None:
            self._end("done")
            return
        self._trial = trial
        self._processes = [ProbeProcess(trial.candidate.config, self) for _ in range(self.sweep.plan.instances)]
        for process in self._processes:
            process.finished.connect(self._on_instance_finished)
        for process in self._processes:  # started together: the contention N processes see
            process.start()
        self.trial_started.emit(trial, self._processes[0].record)

    def _on_instance_finished(self, _record: RunRecord) -> None:
        if any(p.running for p in self._processes):
            return
        records = [p.record for p in self._processes]
        for process in self._processes:
            process.deleteLater()
        self._processes = []
        trial, self._trial = self._trial, None
        if self._cancelled or any(r.status is RunStatus.CANCELLED for r in records):
            self._end("cancelled")
            return
        if self.history:
            for i, record in enumerate(records):
                record.history_id = self.history.record(record, "sweep", self.sweep_id, trial_info(trial, i))
        self.sweep.report(trial, trial_value(records, self.sweep.plan.objective))
        self.progressed.emit(self.sweep, trial)
        self._next()

    def _end(self, status: str) -> None:
        sweep, self._trial = self.sweep, None
        if self.history and self.sweep_id is not None:
            leader = sweep.leader()
            self.history.finish_sweep(self.sweep_id, status,
                                      verdict(leader, sweep.plan.objective) if leader else "no result")
        self.finished.emit(sweep, status)

    def seconds_left(self) -> float | None:
        """Time left if every remaining trial runs (racing may end sooner)."""
        if not self.sweep or not self.sweep.trials_run:
            return None
        per_trial = (time.monotonic() - self.started_at) / self.sweep.trials_run
        return per_trial * max(0, self.sweep.planned_without_racing - self.sweep.trials_run)
