"""RunChanges: what changed in a history's runs since a list of them was made, cheaply enough
to ask twice a second, so that a list follows the file whoever writes it (`tflaunch bench` in
a terminal, another window, this one).

Whether anything was written at all is SQLite's data_version, which changes when any other
connection commits, another process's included: one pragma, no reading. Only then are the
runs compared by id: their count and the sum of their ids first (one pass over an index),
every id only when those differ; the runs that came are read, and the ones listed as still
running read again (they finish, or are found interrupted). What this misses, a reload
finds: a run whose id was taken again after a delete between two looks, and a row that
another program rewrote after it ended.

It reads over a read-only connection of its own, on the thread that made it, and waits at
most BUSY_MS for the file (a busy moment is asked again next time).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..run.record import RunStatus
from .history_file import connect_reader, explain
from .rows import SUMMARY_COLUMNS, RunSummary, summary_from_row

BUSY_MS = 20  # the GUI thread asks: it must not wait for a checkpoint
IDS_AT_ONCE = 500  # ids in one IN (...) list


@dataclass
class Changes:
    added: list[RunSummary] = field(default_factory=list)
    updated: list[RunSummary] = field(default_factory=list)  # runs listed before, read again
    removed: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.removed)


class TooManyChanges(Exception):  # noqa: N818 (an answer, not a fault)
    """More runs came than the caller would read at once: list them all again instead."""


class RunChanges:
    def __init__(self, path: Path) -> None:
        """Follow the history at `path` from now on; HistoryError if it cannot be read."""
        self.path = Path(path)
        self._ids: set[int] = set()  # every run listed
        self._running: set[int] = set()  # those listed as running when last read
        self._id_sum = 0
        try:
            self._db = connect_reader(self.path)
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            self._version = self._data_version()
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "read") from exc

    def note(self, runs: Iterable[RunSummary]) -> None:
        """These runs are listed (read from the file after this follower was made)."""
        running = RunStatus.RUNNING.value
        for run in runs:
            if run.id not in self._ids:
                self._ids.add(run.id)
                self._id_sum += run.id
            if run.status == running:
                self._running.add(run.id)
            else:
                self._running.discard(run.id)

    @property
    def listed(self) -> int:
        return len(self._ids)

    def changed(self) -> bool:
        """Whether anything was written to the file since the last read(); False when the
        file cannot be asked just now."""
        try:
            return self._data_version() != self._version
        except sqlite3.Error:
            return False

    def read(self, most: int) -> Changes:
        """The runs added, changed and removed since the runs noted were read (and noted
        now); TooManyChanges when more than `most` runs came, HistoryError when the file
        cannot be read."""
        try:
            version = self._data_version()  # first: a write during the read is seen next time
            self._db.execute("BEGIN")  # one snapshot for the ids and the rows
            try:
                changes = self._read(most)
            finally:
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "read") from exc
        self._version = version
        self._ids -= changes.removed
        self._running -= changes.removed
        self._id_sum -= sum(changes.removed)
        self.note(changes.added + changes.updated)
        return changes

    def _read(self, most: int) -> Changes:
        if self._db.execute("PRAGMA user_version").fetchone()[0] == 0:
            return Changes()  # a new file nobody could set up yet (read-only): no runs table
        count, total = self._db.execute("SELECT count(*), total(id) FROM runs").fetchone()
        added: set[int] = set()
        removed: set[int] = set()
        if (count, total) != (len(self._ids), self._id_sum):
            ids = {run_id for (run_id,) in self._db.execute("SELECT id FROM runs")}
            added, removed = ids - self._ids, self._ids - ids
        if len(added) > most:
            raise TooManyChanges(f"{len(added)} runs came")
        runs = self._summaries(sorted(added | (self._running - removed)))
        return Changes([r for r in runs if r.id in added], [r for r in runs if r.id not in added], removed)

    def _summaries(self, ids: list[int]) -> list[RunSummary]:
        runs: list[RunSummary] = []
        for at in range(0, len(ids), IDS_AT_ONCE):
            chunk = ids[at:at + IDS_AT_ONCE]
            rows = self._db.execute(f"SELECT {SUMMARY_COLUMNS} FROM runs WHERE id IN ({','.join('?' * len(chunk))})",
                                    chunk).fetchall()
            runs += [summary_from_row(row) for row in rows]
        return runs

    def _data_version(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        self._db.close()

