"""RunRecorder: every run in the history from its first moment, for the CLI and the app alike.

A run is written when it starts (status "running"), its samples as they come (at most
FLUSH_S apart, so a crash loses at most that much), and its end. While the run runs, a
history busy with another process's write is skipped, not waited for (the wait would be
measured): what could not be written then is written at the end. A history that fails
is told (on_problem, and note() for the command line) and the run goes on: a measurement
is never lost to its bookkeeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..run.trial_info import TrialInfo
from ..run.watcher import Output, Watcher
from .history import History, HistoryError

if TYPE_CHECKING:
    from ..run.record import RunRecord

FLUSH_S = 1.0
LIVE_WAIT_S = 0.05  # the longest a write during a run waits for another process's write


@dataclass
class _Row:
    run_id: int | None  # None until the run's row is written (the history was busy at its start)
    sweep_id: int | None = None
    trial: TrialInfo | None = None
    written: int = 0  # samples already stored
    gpu_written: int = 0  # GPU samples already stored
    flushed_at: float = 0.0


class RunRecorder(Watcher):
    def __init__(self, history: History | None, source: str,
                 on_problem: Callable[[str], None] | None = None, problem: HistoryError | None = None) -> None:
        """`on_problem` hears, for each run that ends not stored, the line that says so;
        `problem` is why there is no history, when it could not be opened."""
        self.history = history
        self.source = source
        self.problem = problem  # the latest reason a write failed
        self.unstored = 0  # runs that ended without being stored whole
        self.on_problem = on_problem
        self._rows: dict[int, _Row] = {}
        self._labels: dict[int, tuple[int | None, TrialInfo | None]] = {}

    def label(self, record: RunRecord, sweep_id: int | None, trial: TrialInfo) -> None:
        """Store `record` as this trial of a sweep when it starts."""
        self._labels[id(record)] = (sweep_id, trial)

    def started(self, record: RunRecord) -> None:
        sweep_id, trial = self._labels.pop(id(record), (None, None))
        record.source = self.source  # who ran it is part of its kind (run_kind.py), live as when read back
        row = _Row(None, sweep_id, trial, flushed_at=time.monotonic())
        self._rows[id(record)] = row
        self._begin(record, row)

    def _begin(self, record: RunRecord, row: _Row) -> None:
        run_id = self.write(lambda h: h.begin(record, self.source, row.sweep_id, row.trial), live=True)
        if run_id is not None:
            row.run_id = record.history_id = run_id

    def changed(self, record: RunRecord, output: Output | None) -> None:
        row = self._rows.get(id(record))
        if row is None or output is not None or time.monotonic() - row.flushed_at < FLUSH_S:
            return
        row.flushed_at = time.monotonic()
        if row.run_id is None:
            self._begin(record, row)
        run_id, new, new_gpu = row.run_id, record.samples[row.written:], record.gpu_samples[row.gpu_written:]
        if run_id is not None and self.write(lambda h: h.add_samples(run_id, new), live=True) is not None:
            row.written += len(new)
        if run_id is not None and new_gpu and \
                self.write(lambda h: h.add_gpu_samples(run_id, new_gpu), live=True) is not None:
            row.gpu_written += len(new_gpu)

    def ended(self, record: RunRecord) -> None:
        row = self._rows.pop(id(record), None)
        if row is None:  # refused before it started
            self._labels.pop(id(record), None)
            return
        run_id = row.run_id
        if run_id is None:
            stored = self.write(lambda h: h.record(record, self.source, row.sweep_id, row.trial))
            if stored is not None:
                record.history_id = stored
        else:
            stored = self.write(lambda h: h.finish(run_id, record, row.written, row.gpu_written))
        if stored is None:
            self.unstored += 1
            if self.on_problem is not None and self.problem is not None:
                self.on_problem(self.problem.not_stored("this run is"))

    def write(self, action: Callable[[History], Any], live: bool = False) -> Any:
        """What `action` returned (True for None), or None when it could not be written:
        `live` (a run in progress) waits only LIVE_WAIT_S, and a busy history is not a problem
        then, as the end writes what is missing."""
        if self.history is None:
            return None
        try:
            if live:
                with self.history.patience(LIVE_WAIT_S):
                    result = action(self.history)
            else:
                result = action(self.history)
            return True if result is None else result
        except HistoryError as exc:
            if not (live and exc.kind == "locked"):
                self.problem = exc
            return None

    def note(self) -> str | None:
        """The line the command line prints after its results when runs were not stored."""
        if not self.unstored or self.problem is None:
            return None
        return self.problem.not_stored("this run is" if self.unstored == 1 else f"{self.unstored} runs are")
