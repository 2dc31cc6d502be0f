"""A run as the rows the history stores, and back: one shape for the SQLite file and for a
run carried as a file (a cluster trial's result, written on a node and merged later).

The writing side makes every value storable (a figure out of range becomes NULL, stderr
is capped), so any record a run produced can be written; the reading side is rows.py's,
which checks every column, so a result file from a node is trusted no more than a row.
"""

from __future__ import annotations

import time
from typing import Any

from ..run.record import RunRecord, RunStatus
from ..run.record_data import OUTPUT_KEPT_BYTES
from ..run.trial_info import TrialInfo
from .rows import PHASE_COLUMNS, gpu_samples_from_rows, record_from_rows
from .storable import (
    STDERR_STORED_BYTES,
    storable_gpu_samples,
    storable_int,
    storable_json,
    storable_real,
    storable_samples,
    storable_text,
)
from .stored_values import DamagedRowError, stored_trial

# The columns a run's end sets, in the order History.finish writes them.
FINISHED_COLUMNS = ("finished_at", "status", "failed_phase", "time_to_ready", "peak_rss", "config", "settings",
                    "environment", "model_info", "failure", "exit_code", "exit_signal", "stderr_tail", "imports",
                    "marks", "stopped_at_ready", "launch", "anatomy")


def finished_values(record: RunRecord) -> tuple[Any, ...]:
    """The FINISHED_COLUMNS of a finished run, storable."""
    failure = None
    if record.failure is not None:
        failure = {"kind": record.failure.kind, "message": record.failure.message,
                   "detail": storable_text(record.failure.detail)}
    return (storable_real(record.finished_at) or time.time(), record.status.value, record.failed_phase,
            storable_real(record.time_to_ready), storable_int(record.peak_rss),
            storable_json(record.config.to_dict()), storable_json(record.settings.to_dict()),
            storable_json(record.environment.to_dict()), storable_json(record.model.to_dict()),
            None if failure is None else storable_json(failure), storable_int(record.exit_code),
            storable_int(record.exit_signal), _stored_output(record),
            storable_json(record.imports.to_dict() if record.imports is not None else {}),
            storable_json([[name, storable_real(at)] for name, at in record.marks], "[]"),
            int(record.stopped_at_ready), storable_json(launch_facts(record)),
            storable_json(record.anatomy.to_dict() if record.anatomy is not None else {}))


def _stored_output(record: RunRecord) -> str:
    """The child's output: all of it for a run that did not succeed (what it printed before
    it failed is the evidence), the tail for one that did."""
    if record.status is RunStatus.OK:
        return storable_text("\n".join(record.stderr_tail))
    return storable_text("\n".join(record.whole_output()), OUTPUT_KEPT_BYTES + STDERR_STORED_BYTES)


def launch_facts(record: RunRecord) -> dict[str, Any]:
    """What the launcher did before time zero: the page cache's eviction, the notes it left,
    and how a launch asked to start warm started (words.warm_notes); the cache pack it gave,
    and what watching cost the program (watch_cost.py)."""
    return {**({"page_cache": record.page_cache.to_dict()} if record.page_cache is not None else {}),
            **({"notes": record.launch_notes} if record.launch_notes else {}),
            **({"warm_start": record.warm_start.to_dict()} if record.warm_start is not None else {}),
            **({"cache_pack": record.cache_pack.to_dict()} if record.cache_pack is not None else {}),
            **({"watching": record.watching.to_dict()} if record.watching is not None else {})}


def phase_rows(record: RunRecord) -> list[tuple[Any, ...]]:
    """The run's phases in PHASE_COLUMNS order (their seq is the record's order)."""
    return [(p.name, p.state.value, storable_real(p.started), storable_real(p.duration), storable_int(p.rss),
             storable_int(p.peak_rss), storable_json(p.latency), storable_json(p.parts), seq,
             storable_json({key: value for key, value in (("count", p.count), ("read_bytes", p.read_bytes),
                                                          ("rchar", p.rchar)) if value is not None}))
            for seq, p in enumerate(record.phases.values())]


def run_data(record: RunRecord, source: str, trial: TrialInfo | None) -> dict[str, Any]:
    """A finished run as JSON data: its runs row by column, its phases, RSS and GPU samples."""
    row = dict(zip(FINISHED_COLUMNS, finished_values(record), strict=True))
    row.update(launched_at=storable_real(record.launched_at) or time.time(), source=source, model=record.subject,
               trial=None if trial is None else storable_json(trial.to_dict()))
    return {"run": row, "phases": [list(p) for p in phase_rows(record)],
            "samples": [list(s) for s in storable_samples(record.samples)],
            "gpu_samples": [list(s) for s in storable_gpu_samples(record.gpu_samples)]}


def record_from_data(data: Any) -> tuple[RunRecord, TrialInfo | None]:
    """A run read back from run_data's shape, checked column by column; the trial it was.
    DamagedRowError names the first part that is not what tflaunch writes."""
    if not isinstance(data, dict) or not isinstance(data.get("run"), dict):
        raise DamagedRowError("it holds no run (a JSON object with a 'run' object)")
    row = {column: data["run"].get(column) for column in (*FINISHED_COLUMNS, "launched_at", "source", "model",
                                                           "command", "trial")}
    row["launch"] = row["launch"] or "{}"  # a result written before launch facts were kept
    row["anatomy"] = row["anatomy"] or "{}"  # or before anatomies were
    row.update(writer_pid=None, writer_started=None, sweep_id=None)
    parts = {}
    for name, width in (("phases", len(PHASE_COLUMNS.split(","))), ("samples", 2), ("gpu_samples", 3)):
        rows = data.get(name, [])
        if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == width for r in rows):
            raise DamagedRowError(f"its {name} are not lists of {width} values")
        parts[name] = rows
    record = record_from_rows(row, parts["phases"], parts["samples"])
    record.gpu_samples = gpu_samples_from_rows(parts["gpu_samples"])
    return record, None if row["trial"] is None else stored_trial(row["trial"])
