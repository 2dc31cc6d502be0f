"""Run history: every run, from the app or the command line, in one SQLite file.

A run is written when it starts (status "running") and its samples as they come, so a
crash of the writer loses nothing but the end: the next open finds the row still
"running" with a writer that is gone and marks it "interrupted".
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import psutil

from ..run.record import Failure, PhaseRecord, PhaseState, RunRecord, RunStatus
from ..settings.config import LaunchConfig

SCHEMA_VERSION = 3

# Each entry takes the database from version i to i + 1. Never edit a shipped step:
# add a new one, so every existing file walks the same path.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        launched_at REAL NOT NULL,
        finished_at REAL,
        source TEXT NOT NULL,
        model TEXT NOT NULL,
        status TEXT NOT NULL,
        failed_phase TEXT,
        time_to_ready REAL,
        peak_rss INTEGER,
        config TEXT NOT NULL,
        settings TEXT NOT NULL DEFAULT '{}',
        environment TEXT NOT NULL DEFAULT '{}',
        model_info TEXT NOT NULL DEFAULT '{}',
        failure TEXT,
        exit_code INTEGER,
        exit_signal INTEGER,
        stderr_tail TEXT NOT NULL DEFAULT '',
        writer_pid INTEGER,
        writer_started REAL
    );
    CREATE INDEX runs_by_model ON runs(model, launched_at);
    CREATE TABLE phases (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        started REAL,
        duration REAL,
        rss INTEGER,
        peak_rss INTEGER,
        latency TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE samples (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        t REAL NOT NULL,
        rss INTEGER NOT NULL
    );
    CREATE INDEX samples_by_run ON samples(run_id, t);
    """,
    # 2: scripts launched with a profile keep their command line.
    "ALTER TABLE runs ADD COLUMN command TEXT",
    # 3: sweeps, and which sweep trial a run was.
    """
    CREATE TABLE sweeps (
        id INTEGER PRIMARY KEY,
        created REAL NOT NULL,
        model TEXT NOT NULL,
        plan TEXT NOT NULL,
        status TEXT NOT NULL,
        summary TEXT,
        writer_pid INTEGER,
        writer_started REAL
    );
    ALTER TABLE runs ADD COLUMN sweep_id INTEGER REFERENCES sweeps(id) ON DELETE SET NULL;
    ALTER TABLE runs ADD COLUMN trial TEXT
    """,
)


class HistoryError(Exception):
    """The history file cannot be used; the message says which file and why."""


@dataclass(frozen=True)
class RunSummary:
    """One row of the history list, without samples."""

    id: int
    launched_at: float
    source: str
    model: str
    status: str
    failed_phase: str | None
    time_to_ready: float | None
    peak_rss: int | None
    settings_summary: str
    assumed_inputs: bool = False  # a default filled an input shape: the figures are tflaunch's guess


def _assumed(model_info: str | None) -> bool:
    try:
        inputs = json.loads(model_info or "{}").get("inputs") or []
        return any(isinstance(i, dict) and i.get("assumed") for i in inputs)
    except (ValueError, AttributeError):
        return False


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def _writer_identity() -> tuple[int, float]:
    me = psutil.Process()
    return me.pid, me.create_time()


def _writer_alive(pid: int | None, started: float | None) -> bool:
    if pid is None:
        return False
    try:
        # A pid can be reused; the start time tells the original writer from a stranger.
        return abs(psutil.Process(pid).create_time() - (started or 0)) < 1.0
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


class History:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None)  # explicit transactions
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute("PRAGMA journal_mode = WAL")
            # WAL with NORMAL sync: no fsync per commit (runs are written while the child starts,
            # and a stalled fsync must not slow what is measured); still never a corrupt file.
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
            self.interrupted_on_open = self.mark_interrupted()
        except sqlite3.DatabaseError as exc:
            raise HistoryError(
                f"The run history {self.path} cannot be read ({exc}). Move it aside to start a new one; "
                "tflaunch leaves it untouched."
            ) from exc

    def close(self) -> None:
        self._db.close()

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"written by a newer tflaunch (schema {version}, this one knows {SCHEMA_VERSION})")
        for step in range(version, SCHEMA_VERSION):
            with self._transaction():
                self._run_script(MIGRATIONS[step])
                self._db.execute(f"PRAGMA user_version = {step + 1}")

    def _run_script(self, script: str) -> None:
        # executescript would COMMIT our open transaction; run the statements one by one.
        for statement in script.split(";"):
            if statement.strip():
                self._db.execute(statement)

    def _transaction(self) -> AbstractContextManager[None]:
        db = self._db

        class _Tx:
            def __enter__(self) -> None:
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                         tb: TracebackType | None) -> Literal[False]:
                db.execute("COMMIT" if kind is None else "ROLLBACK")
                return False

        return _Tx()

    # -- writing -----------------------------------------------------------------------
    def begin(self, record: RunRecord, source: str, sweep_id: int | None = None,
              trial: dict[str, Any] | None = None) -> int:
        pid, started = _writer_identity()
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO runs (launched_at, source, model, status, config, writer_pid, writer_started, command,"
                " sweep_id, trial) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (record.launched_at, source, record.subject, RunStatus.RUNNING.value,
                 _json(record.config.to_dict()), pid, started,
                 None if record.command is None else _json(record.command),
                 sweep_id, None if trial is None else _json(trial)),
            )
        assert cursor.lastrowid is not None  # set by the INSERT
        return cursor.lastrowid

    def add_samples(self, run_id: int, samples: Sequence[tuple[float, int]]) -> None:
        if samples:
            with self._transaction():
                self._db.executemany("INSERT INTO samples (run_id, t, rss) VALUES (?, ?, ?)",
                                     [(run_id, t, rss) for t, rss in samples])

    def finish(self, run_id: int, record: RunRecord, samples_written: int = 0) -> None:
        """Store the finished record; samples after the first `samples_written` are added."""
        failure = None
        if record.failure is not None:
            failure = {"kind": record.failure.kind, "message": record.failure.message,
                       "detail": record.failure.detail}
        with self._transaction():
            self._db.execute(
                "UPDATE runs SET finished_at=?, status=?, failed_phase=?, time_to_ready=?, peak_rss=?,"
                " config=?, settings=?, environment=?, model_info=?, failure=?, exit_code=?, exit_signal=?,"
                " stderr_tail=? WHERE id=?",
                (record.finished_at or time.time(), record.status.value, record.failed_phase,
                 record.time_to_ready, record.peak_rss, _json(record.config.to_dict()),
                 _json(record.settings), _json(record.environment), _json(record.model),
                 None if failure is None else _json(failure), record.exit_code, record.exit_signal,
                 "\n".join(record.stderr_tail), run_id),
            )
            self._db.execute("DELETE FROM phases WHERE run_id=?", (run_id,))
            self._db.executemany(
                "INSERT INTO phases (run_id, name, state, started, duration, rss, peak_rss, latency)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, p.name, p.state.value, p.started, p.duration, p.rss, p.peak_rss, _json(p.latency))
                 for p in record.phases.values()],
            )
            rest = record.samples[samples_written:]
            self._db.executemany("INSERT INTO samples (run_id, t, rss) VALUES (?, ?, ?)",
                                 [(run_id, t, rss) for t, rss in rest])

    def record(self, record: RunRecord, source: str, sweep_id: int | None = None,
               trial: dict[str, Any] | None = None) -> int:
        """Store a run that is already finished (tests and imports; runs use RunRecorder)."""
        run_id = self.begin(record, source, sweep_id, trial)
        self.finish(run_id, record)
        return run_id

    # -- sweeps --------------------------------------------------------------------------
    def create_sweep(self, model: str, plan: dict[str, Any]) -> int:
        pid, started = _writer_identity()
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO sweeps (created, model, plan, status, writer_pid, writer_started)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (time.time(), model, _json(plan), "running", pid, started))
        assert cursor.lastrowid is not None  # set by the INSERT
        return cursor.lastrowid

    def finish_sweep(self, sweep_id: int, status: str, summary: str) -> None:
        with self._transaction():
            self._db.execute("UPDATE sweeps SET status=?, summary=? WHERE id=?", (status, summary, sweep_id))

    def sweep_plan(self, sweep_id: int) -> dict[str, Any]:
        row = self._db.execute("SELECT plan FROM sweeps WHERE id=?", (sweep_id,)).fetchone()
        if row is None:
            raise KeyError(sweep_id)
        plan: dict[str, Any] = json.loads(row[0])
        return plan

    def sweep_trials(self, sweep_id: int) -> list[tuple[dict[str, Any], RunRecord]]:
        """(trial, record) of every finished trial of a sweep, in the order they ran."""
        rows = self._db.execute("SELECT id, trial FROM runs WHERE sweep_id=? ORDER BY launched_at, id",
                                (sweep_id,)).fetchall()
        return [(json.loads(trial), self.load(run_id)) for run_id, trial in rows if trial]

    def list_sweeps(self) -> list[tuple[int, float, str, str, str | None]]:
        """(id, created, model, status, summary), newest first."""
        return self._db.execute(
            "SELECT id, created, model, status, summary FROM sweeps ORDER BY created DESC").fetchall()

    def mark_interrupted(self) -> int:
        """Runs and sweeps left "running" by a writer that no longer exists are marked
        interrupted; the number of runs so marked."""
        counts = []
        for table in ("runs", "sweeps"):
            rows = self._db.execute(
                f"SELECT id, writer_pid, writer_started FROM {table} WHERE status=?", (RunStatus.RUNNING.value,)
            ).fetchall()
            dead = [(RunStatus.INTERRUPTED.value, row_id) for row_id, pid, started in rows
                    if not _writer_alive(pid, started)]
            if dead:
                with self._transaction():
                    self._db.executemany(f"UPDATE {table} SET status=? WHERE id=?", dead)
            counts.append(len(dead))
        return counts[0]

    def delete(self, run_ids: Iterable[int]) -> None:
        with self._transaction():
            self._db.executemany("DELETE FROM runs WHERE id=?", [(i,) for i in run_ids])

    # -- reading -----------------------------------------------------------------------
    def list_runs(self, model: str | None = None, limit: int = 10000) -> list[RunSummary]:
        query = ("SELECT id, launched_at, source, model, status, failed_phase, time_to_ready, peak_rss, config,"
                 " model_info FROM runs")
        args: tuple[str, ...] = ()
        if model is not None:
            query, args = query + " WHERE model=?", (model,)
        # The columns of RunSummary, then the config it is summarised from.
        rows: list[tuple[int, float, str, str, str, str | None, float | None, int | None, str, str]] = (
            self._db.execute(query + " ORDER BY launched_at DESC LIMIT ?", (*args, limit)).fetchall())
        return [RunSummary(*row[:8], LaunchConfig.from_dict(json.loads(row[8])).summary(), _assumed(row[9]))
                for row in rows]

    def load(self, run_id: int) -> RunRecord:
        with closing(self._db.execute("SELECT * FROM runs WHERE id=?", (run_id,))) as cursor:
            row = cursor.fetchone()
            if row is None:
                raise KeyError(run_id)
            columns = [c[0] for c in cursor.description]
        data = dict(zip(columns, row, strict=True))
        command = json.loads(data["command"]) if data["command"] else None
        record = RunRecord(LaunchConfig.from_dict(json.loads(data["config"])), launched_at=data["launched_at"],
                           command=command)
        record.status = RunStatus(data["status"])
        record.finished_at = data["finished_at"]
        record.failed_phase = data["failed_phase"]
        record.settings = json.loads(data["settings"])
        record.environment = json.loads(data["environment"])
        record.model = json.loads(data["model_info"])
        if data["time_to_ready"] is not None:
            record.ready_at = data["launched_at"] + data["time_to_ready"]
        if data["failure"]:
            record.failure = Failure(**json.loads(data["failure"]))
        record.exit_code, record.exit_signal = data["exit_code"], data["exit_signal"]
        record.stderr_tail.extend(data["stderr_tail"].splitlines())
        for name, state, started, duration, rss, peak, latency in self._db.execute(
            "SELECT name, state, started, duration, rss, peak_rss, latency FROM phases WHERE run_id=?", (run_id,)
        ):
            record.phases[name] = PhaseRecord(name, PhaseState(state), started, duration, rss, peak,
                                              json.loads(latency))
        record.samples = [tuple(r) for r in self._db.execute(
            "SELECT t, rss FROM samples WHERE run_id=? ORDER BY t", (run_id,))]
        record.history_id = run_id
        return record


def default_history() -> History:
    from ..paths import history_path

    return History(history_path())
