"""RunRecorder: every run in the history from its first moment, for the CLI and the app alike.

A run is written when it starts (status "running"), its samples as they come (at most
FLUSH_S apart, so a crash loses at most that much), and its end. A history that fails
is reported once and the run goes on: a measurement is never lost to its bookkeeping.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..run.driver import Watcher
from ..run.record import RunRecord
from ..run.session import Output
from .history import History, HistoryError

FLUSH_S = 1.0


@dataclass
class _Row:
    run_id: int
    written: int = 0  # samples already stored
    flushed_at: float = 0.0


class RunRecorder(Watcher):
    def __init__(self, history: History | None, source: str,
                 on_problem: Callable[[str], None] | None = None) -> None:
        self.history = history
        self.source = source
        self.problem: str | None = None
        self.on_problem = on_problem
        self._rows: dict[int, _Row] = {}
        self._labels: dict[int, tuple[int | None, dict[str, Any] | None]] = {}

    def label(self, record: RunRecord, sweep_id: int | None, trial: dict[str, Any]) -> None:
        """Store `record` as this trial of a sweep when it starts."""
        self._labels[id(record)] = (sweep_id, trial)

    def started(self, record: RunRecord) -> None:
        sweep_id, trial = self._labels.pop(id(record), (None, None))
        run_id = self.write(lambda h: h.begin(record, self.source, sweep_id, trial))
        if run_id is not None:
            record.history_id = run_id
            self._rows[id(record)] = _Row(run_id, flushed_at=time.monotonic())

    def changed(self, record: RunRecord, output: Output | None) -> None:
        row = self._rows.get(id(record))
        if row is None or output is not None or time.monotonic() - row.flushed_at < FLUSH_S:
            return
        new = record.samples[row.written:]
        row.flushed_at = time.monotonic()
        if self.write(lambda h: h.add_samples(row.run_id, new)) is not None:
            row.written += len(new)

    def ended(self, record: RunRecord) -> None:
        row = self._rows.pop(id(record), None)
        if row is None:  # refused before it started, or not stored
            self._labels.pop(id(record), None)
            return
        self.write(lambda h: h.finish(row.run_id, record, row.written))

    def write(self, action: Callable[[History], Any]) -> Any:
        if self.history is None or self.problem is not None:
            return None
        try:
            result = action(self.history)
            return True if result is None else result
        except (sqlite3.Error, HistoryError) as exc:
            self.problem = f"the run history {self.history.path} cannot be written ({exc}); runs are not stored"
            if self.on_problem:
                self.on_problem(self.problem)
            return None
