"""Run history: every run, from the app or the command line, in one SQLite file.

A run is written when it starts (status "running") and its samples as they come, so a
crash of the writer loses nothing but the end: the next open finds the row still
"running" with a writer that is gone and marks it "interrupted".

Whatever happens to the file (locked by another process, damaged, read-only, several
processes creating it at once), History raises only HistoryError, whose message names the
file, the cause and what to do; a caller stores nothing and goes on.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..run.status import RunStatus
from ..run.trial_info import TrialInfo
from .history_file import BUSY_TIMEOUT_S, HistoryError, connect, explain
from .migrations import MIGRATIONS
from .storable import (
    storable_gpu_samples,
    storable_int,
    storable_json,
    storable_real,
    storable_samples,
)
from .stored_values import DamagedRowError, parsed_json, stored_trial

# A run's rows as a record or a summary (rows.py, run_rows.py) bring the record and every
# payload type it holds, some 50 ms of imports: they are imported by the first run that is
# stored, listed or loaded, not by opening the history, which the app does before its first
# paint (tests/gui/test_first_frame_imports.py).
if TYPE_CHECKING:
    from ..run.record import RunRecord
    from .rows import RunSummary

# HistoryError lives beside History for its callers.
__all__ = ["BUSY_TIMEOUT_S", "MIGRATIONS", "SCHEMA_VERSION", "DeletedRuns", "History", "HistoryError",
           "default_history"]

SCHEMA_VERSION = len(MIGRATIONS)
# Bytes of one run's own columns that load() reads: a run is kilobytes (its log is capped when
# it is stored), so more is a file someone else wrote, refused before it is read into memory.
RUN_ROW_MOST = 32 << 20


@dataclass(frozen=True)
class DeletedRuns:
    """Runs deleted by History.take(), row for row as they were stored, kept in memory so
    that an undo can put them back exactly (samples, phases, damaged rows and all)."""

    tables: dict[str, tuple[tuple[str, ...], list[tuple[Any, ...]]]]  # table: (columns, rows)

    @property
    def count(self) -> int:
        return len(self.tables["runs"][1])


# psutil (some 20 ms of imports) is imported where a writer is named or checked: a history
# that is only opened, as the window's first frame opens it, has no use for it.
def _writer_identity() -> tuple[int, float]:
    import psutil

    me = psutil.Process()
    return me.pid, me.create_time()


def _writer_alive(pid: int | None, started: float | None) -> bool:
    if pid is None or pid <= 0:  # no process has such a pid (psutil refuses a negative one)
        return False
    import psutil

    try:
        # A pid can be reused; the start time tells the original writer from a stranger.
        return abs(psutil.Process(pid).create_time() - (started or 0)) < 1.0
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OverflowError):
        return False


class History:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.read_only: HistoryError | None = None  # why runs cannot be stored here, when so
        self.damaged: HistoryError | None = None  # set when damage is met: nothing is written after
        self.interrupted_on_open = 0
        self._version = 0
        self._in_transaction = False  # inside transaction(): each write joins it
        try:
            self._db, self.read_only = connect(self.path)
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "opened") from exc
        try:
            self._migrate()
            if self.read_only is None:
                with self.patience(0.5):  # a busy file leaves them for the next open
                    self.interrupted_on_open = self.mark_interrupted()
        except HistoryError as exc:
            if exc.kind not in ("locked", "full") or self._version < SCHEMA_VERSION:
                self._db.close()
                raise
            if exc.kind == "full":  # the file is read as it is; runs are not stored, as said once
                self.read_only = exc
        except sqlite3.Error as exc:
            self._db.close()
            raise self._error(exc, "opened") from exc

    def close(self) -> None:
        self._db.close()

    def _migrate(self) -> None:
        self._version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if self._version < SCHEMA_VERSION and self.read_only is None:
            # One transaction for every step, and the version read again inside it: of several
            # processes opening a new file at once, one creates it and the others wait, then
            # find it done.
            with self._writing("set up"):
                self._version = self._db.execute("PRAGMA user_version").fetchone()[0]
                if self._version < SCHEMA_VERSION:
                    for step in range(self._version, SCHEMA_VERSION):
                        self._run_script(MIGRATIONS[step])
                    self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    self._version = SCHEMA_VERSION
        if self._version > SCHEMA_VERSION:
            raise HistoryError(
                f"the run history {self.path} was written by a newer tflaunch (schema {self._version}, "
                f"this one knows {SCHEMA_VERSION})",
                "Update tflaunch to use it, or set TFLAUNCH_DATA_DIR to another folder; tflaunch left it untouched.",
                "newer")

    def _run_script(self, script: str) -> None:
        # executescript would COMMIT our open transaction; run the statements one by one.
        for statement in script.split(";"):
            if statement.strip():
                self._db.execute(statement)

    @contextmanager
    def patience(self, seconds: float) -> Iterator[None]:
        """Writes inside wait at most `seconds` for another process's write (a run in progress
        skips a busy moment instead of waiting through it: the wait would be measured)."""
        before = self._db.execute("PRAGMA busy_timeout").fetchone()[0]
        self._db.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
        try:
            yield
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {int(before)}")

    @contextmanager
    def transaction(self, doing: str = "written") -> Iterator[None]:
        """Reads and the writes that depend on them as one write transaction, so no other
        process writes in between (two merges of the same sweep at once would each find a
        trial missing and each store it); all of it is stored, or none."""
        with self._writing(doing):
            self._in_transaction = True
            try:
                yield
            finally:
                self._in_transaction = False

    @contextmanager
    def _writing(self, doing: str = "written") -> Iterator[None]:
        """One write transaction; any failure comes out as a HistoryError."""
        if self._in_transaction:  # the outer transaction() begins, commits or rolls back
            yield
            return
        refusal = self.read_only or self.damaged
        if refusal is not None:
            raise refusal
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                try:
                    self._db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the first error is the one to tell
            raise self._error(exc, doing) from exc

    def _error(self, exc: sqlite3.Error, doing: str) -> HistoryError:
        error = explain(self.path, exc, doing)
        if error.kind == "damaged":
            self.damaged = error
        return error

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(exc, "read") from exc

    # -- writing -----------------------------------------------------------------------
    # Every value is made storable first (a figure out of range becomes NULL, a stored
    # stderr is capped): a record a run produced can always be written.
    def begin(self, record: RunRecord, source: str, sweep_id: int | None = None,
              trial: TrialInfo | None = None) -> int:
        pid, started = _writer_identity()
        with self._writing():
            cursor = self._db.execute(
                "INSERT INTO runs (launched_at, source, model, status, config, writer_pid, writer_started,"
                " sweep_id, trial) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (storable_real(record.launched_at) or time.time(), source, record.subject, RunStatus.RUNNING.value,
                 storable_json(record.config.to_dict()), pid, started,
                 sweep_id, None if trial is None else storable_json(trial.to_dict())),
            )
        assert cursor.lastrowid is not None  # set by the INSERT
        return cursor.lastrowid

    def add_samples(self, run_id: int, samples: Sequence[tuple[float, int]]) -> None:
        rows = [(run_id, t, rss) for t, rss in storable_samples(samples)]
        if rows:
            with self._writing():
                self._db.executemany("INSERT INTO samples (run_id, t, rss) VALUES (?, ?, ?)", rows)

    def add_gpu_samples(self, run_id: int, samples: Sequence[tuple[float, dict[int, int]]]) -> None:
        """GPU memory samples (s since launch, {gpu index: bytes}) as they come, like add_samples."""
        rows = [(run_id, t, gpu, size) for t, gpu, size in storable_gpu_samples(samples)]
        if rows:
            with self._writing():
                self._db.executemany("INSERT INTO gpu_samples (run_id, t, gpu, bytes) VALUES (?, ?, ?, ?)", rows)

    def finish(self, run_id: int, record: RunRecord, samples_written: int = 0, gpu_samples_written: int = 0) -> None:
        """Store the finished record; samples after the first `samples_written` (GPU samples
        after the first `gpu_samples_written`) are added."""
        from .run_rows import FINISHED_COLUMNS, finished_values, phase_rows

        with self._writing():
            self._db.execute(f"UPDATE runs SET {', '.join(c + '=?' for c in FINISHED_COLUMNS)} WHERE id=?",
                             (*finished_values(record), run_id))
            self._db.execute("DELETE FROM phases WHERE run_id=?", (run_id,))
            self._db.executemany(
                "INSERT INTO phases (run_id, name, state, started, duration, rss, peak_rss, latency, parts, seq,"
                " extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, *row) for row in phase_rows(record)],
            )
            rest = storable_samples(record.samples[samples_written:])
            self._db.executemany("INSERT INTO samples (run_id, t, rss) VALUES (?, ?, ?)",
                                 [(run_id, t, rss) for t, rss in rest])
            self._db.executemany("INSERT INTO gpu_samples (run_id, t, gpu, bytes) VALUES (?, ?, ?, ?)",
                                 [(run_id, t, gpu, size) for t, gpu, size
                                  in storable_gpu_samples(record.gpu_samples[gpu_samples_written:])])

    def record(self, record: RunRecord, source: str, sweep_id: int | None = None,
               trial: TrialInfo | None = None) -> int:
        """Store a run that is already finished (tests, imports, and a run whose start found
        the history busy)."""
        run_id = self.begin(record, source, sweep_id, trial)
        self.finish(run_id, record)
        return run_id

    # -- sweeps --------------------------------------------------------------------------
    def create_sweep(self, model: str, plan: dict[str, Any]) -> int:
        pid, started = _writer_identity()
        with self._writing():
            cursor = self._db.execute(
                "INSERT INTO sweeps (created, model, plan, status, writer_pid, writer_started)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (time.time(), model, storable_json(plan), "running", pid, started))
        assert cursor.lastrowid is not None  # set by the INSERT
        return cursor.lastrowid

    def finish_sweep(self, sweep_id: int, status: str, summary: str) -> None:
        with self._writing():
            self._db.execute("UPDATE sweeps SET status=?, summary=? WHERE id=?", (status, summary, sweep_id))

    def sweep_plan(self, sweep_id: int) -> dict[str, Any]:
        with self._reading():
            row = self._db.execute("SELECT plan FROM sweeps WHERE id=?", (sweep_id,)).fetchone()
        if row is None:
            raise KeyError(sweep_id)
        try:
            plan: dict[str, Any] = parsed_json(row[0], "plan")
        except DamagedRowError as exc:
            raise self._damaged_row(f"sweep {sweep_id}", exc) from None
        return plan

    def sweep_trials(self, sweep_id: int) -> list[tuple[TrialInfo, RunRecord]]:
        """(trial, record) of every finished trial of a sweep, in the order they ran."""
        with self._reading():
            rows = self._db.execute("SELECT id, trial FROM runs WHERE sweep_id=? ORDER BY launched_at, id",
                                    (sweep_id,)).fetchall()
        out = []
        for run_id, trial in rows:
            if trial:
                try:
                    out.append((stored_trial(trial), self.load(run_id)))
                except DamagedRowError as exc:
                    raise self._damaged_row(f"run {run_id}", exc, run_id) from None
        return out

    def list_sweeps(self) -> list[tuple[int, float, str, str, str | None]]:
        """(id, created, model, status, summary), newest first."""
        with self._reading():
            return self._db.execute(
                "SELECT id, created, model, status, summary FROM sweeps ORDER BY created DESC").fetchall()

    def mark_interrupted(self) -> int:
        """Runs and sweeps left "running" by a writer that no longer exists are marked
        interrupted; the number of runs so marked."""
        counts = []
        for table in ("runs", "sweeps"):
            with self._reading():
                rows = self._db.execute(
                    f"SELECT id, writer_pid, writer_started FROM {table} WHERE status=?", (RunStatus.RUNNING.value,)
                ).fetchall()
            dead = [(RunStatus.INTERRUPTED.value, row_id) for row_id, pid, started in rows
                    if not _writer_alive(storable_int(pid), storable_real(started))]
            if dead:
                with self._writing():
                    self._db.executemany(f"UPDATE {table} SET status=? WHERE id=?", dead)
            counts.append(len(dead))
        return counts[0]

    def delete(self, run_ids: Iterable[int]) -> int:
        """Delete the runs; how many were there to delete (another process may have been first)."""
        with self._writing():
            return self._db.executemany("DELETE FROM runs WHERE id=?", [(i,) for i in run_ids]).rowcount

    def take(self, run_ids: Sequence[int]) -> DeletedRuns:
        """Delete the runs, returning their rows as stored (phases and samples with them),
        for put_back() to undo the delete."""
        marks = ",".join("?" * len(run_ids))
        taken: dict[str, tuple[tuple[str, ...], list[tuple[Any, ...]]]] = {}
        with self._writing("changed"):
            for table, key in (("runs", "id"), ("phases", "run_id"), ("samples", "run_id"),
                               ("gpu_samples", "run_id")):
                cursor = self._db.execute(f"SELECT * FROM {table} WHERE {key} IN ({marks})", tuple(run_ids))
                taken[table] = (tuple(c[0] for c in cursor.description), cursor.fetchall())
            self._db.execute(f"DELETE FROM runs WHERE id IN ({marks})", tuple(run_ids))  # cascades
        return DeletedRuns(taken)

    def put_back(self, deleted: DeletedRuns) -> list[int]:
        """Store runs taken by take() again, under their old ids (new ones where a run
        started since has taken an id); their ids, in the order taken."""
        ids: list[int] = []
        with self._writing("changed"):
            new_ids: dict[int, int] = {}
            columns, rows = deleted.tables["runs"]
            at = columns.index("id")
            for row in rows:
                free = self._db.execute("SELECT 1 FROM runs WHERE id=?", (row[at],)).fetchone() is None
                cols = columns if free else columns[:at] + columns[at + 1:]
                values = row if free else row[:at] + row[at + 1:]
                cursor = self._db.execute(f"INSERT INTO runs ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
                                          values)
                assert cursor.lastrowid is not None  # set by the INSERT
                new_ids[row[at]] = cursor.lastrowid
                ids.append(cursor.lastrowid)
            for table in ("phases", "samples", "gpu_samples"):
                columns, rows = deleted.tables[table]
                key = columns.index("run_id")
                self._db.executemany(
                    f"INSERT INTO {table} ({','.join(columns)}) VALUES ({','.join('?' * len(columns))})",
                    [(*row[:key], new_ids[row[key]], *row[key + 1:]) for row in rows])
        return ids

    # -- reading -----------------------------------------------------------------------
    def list_runs(self, model: str | None = None, limit: int | None = None) -> list[RunSummary]:
        """Newest first, all of them unless `limit` says how many; a row that cannot be read
        is listed with status "damaged" and why."""
        from .rows import SUMMARY_COLUMNS, summary_from_row

        if self._version == 0:  # a new file that could not be set up (read-only): nothing in it
            return []
        query = f"SELECT {SUMMARY_COLUMNS} FROM runs"
        args: tuple[str, ...] = ()
        if model is not None:
            query, args = query + " WHERE model=?", (model,)
        with self._reading():
            rows = self._db.execute(query + " ORDER BY launched_at DESC, id DESC LIMIT ?",
                                    (*args, -1 if limit is None else limit)).fetchall()
        return [summary_from_row(row) for row in rows]

    def find_runs(self, *, ids: Sequence[int] | None = None, model_contains: str | None = None,
                  statuses: Sequence[str] = (), since: float | None = None, until: float | None = None,
                  limit: int | None = None) -> list[RunSummary]:
        """The runs matching every filter given, newest first: ids, a model containing the text,
        a status (a RunStatus value, or "damaged" for rows that cannot be read), launched at
        `since` or later and before `until` (Unix times). Damaged rows are listed as in list_runs."""
        from .rows import DAMAGED, SUMMARY_COLUMNS, summary_from_row

        if self._version == 0:  # a new file that could not be set up (read-only): nothing in it
            return []
        where: list[str] = []
        args: list[Any] = []
        if ids is not None:
            where.append(f"id IN ({','.join('?' * len(ids))})")
            args += ids
        if model_contains:
            where.append("instr(model, ?) > 0")
            args.append(model_contains)
        # A damaged row's status is decided on reading: with "damaged" asked for, statuses are
        # filtered on the summaries instead.
        by_summary = DAMAGED in statuses
        if statuses and not by_summary:
            where.append(f"status IN ({','.join('?' * len(statuses))})")
            args += statuses
        if since is not None:
            where.append("launched_at >= ?")
            args.append(since)
        if until is not None:
            where.append("launched_at < ?")
            args.append(until)
        query = (f"SELECT {SUMMARY_COLUMNS} FROM runs" + (f" WHERE {' AND '.join(where)}" if where else "")
                 + " ORDER BY launched_at DESC, id DESC")
        if limit is not None and not by_summary:
            query, args = query + " LIMIT ?", [*args, limit]
        with self._reading():
            rows = self._db.execute(query, args).fetchall()
        runs = [summary_from_row(row) for row in rows]
        if by_summary:
            runs = [run for run in runs if run.status in statuses][:limit]
        return runs

    def load(self, run_id: int) -> RunRecord:
        """The stored run; KeyError if there is none, HistoryError if it cannot be read."""
        from .rows import PHASE_COLUMNS, gpu_samples_from_rows, record_from_rows

        with self._reading():
            size = self._db.execute(f"SELECT {self._row_bytes()} FROM runs WHERE id=?", (run_id,)).fetchone()
            if size is not None and (size[0] or 0) > RUN_ROW_MOST:
                raise self._damaged_row(f"run {run_id}", DamagedRowError(
                    f"its columns hold {size[0]:,} bytes, more than the {RUN_ROW_MOST >> 20} MiB a run can"), run_id)
            with closing(self._db.execute("SELECT * FROM runs WHERE id=?", (run_id,))) as cursor:
                row = cursor.fetchone()
                if row is None:
                    raise KeyError(run_id)
                columns = [c[0] for c in cursor.description]
            phases = self._db.execute(f"SELECT {PHASE_COLUMNS} FROM phases WHERE run_id=?"
                                      " ORDER BY seq IS NULL, seq, rowid", (run_id,)).fetchall()
            samples = self._db.execute("SELECT t, rss FROM samples WHERE run_id=? ORDER BY t", (run_id,)).fetchall()
            gpu_rows = self._db.execute("SELECT t, gpu, bytes FROM gpu_samples WHERE run_id=? ORDER BY t, rowid",
                                        (run_id,)).fetchall()
        try:
            record = record_from_rows(dict(zip(columns, row, strict=True)), phases, samples)
        except DamagedRowError as exc:
            raise self._damaged_row(f"run {run_id}", exc, run_id) from None
        record.gpu_samples = gpu_samples_from_rows(gpu_rows)
        record.history_id = run_id
        return record

    def _row_bytes(self) -> str:
        """SQL for the bytes of a run's columns, counted by SQLite without reading them out."""
        columns = [row[1] for row in self._db.execute("PRAGMA table_info(runs)").fetchall()]
        return " + ".join(f'coalesce(length(CAST("{c}" AS BLOB)), 0)' for c in columns) or "0"

    def _damaged_row(self, what: str, exc: DamagedRowError, run_id: int | None = None) -> HistoryError:
        delete = "" if run_id is None else (f" Delete it with `tflaunch history delete {run_id}` or in the app's "
                                            "History tab.")
        return HistoryError(f"{what} in the run history {self.path} is damaged ({exc})",
                            f"It cannot be shown; the other runs are not affected.{delete}", "damaged run")


def default_history() -> History:
    from ..paths import history_path

    return History(history_path())
