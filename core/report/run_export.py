"""Stored runs as data for other tools: a JSON object or a CSV row per run.

Figures are plain numbers in SI units (seconds, bytes), named so in the CSV header
(time_to_ready_s, peak_rss_bytes), so a spreadsheet or pandas reads them as numbers. A
row that cannot be read is exported as what is known of it, with the reason.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..phases import phase_rows
from ..run.record import RunRecord
from ..run.trial_node import TrialNode
from ..store.rows import DAMAGED, RunSummary
from .review import csv_cell


@dataclass(frozen=True)
class ExportedRun:
    """One run to export: its summary, and its record unless the row is damaged."""

    summary: RunSummary
    record: RunRecord | None
    damage: str = ""  # why the record could not be read


# The columns of every export; a PHASE_s column for each phase any run reached goes
# between other_s and the steady columns (phase_columns).
COLUMNS_BEFORE_PHASES = [
    "id", "launched", "launched_unix_s", "source", "model", "status", "failed_phase", "settings",
    "assumed_input_shape", "time_to_ready_s", "other_s",
]
COLUMNS_AFTER_PHASES = [
    "steady_median_per_call_s", "steady_p90_per_call_s", "steady_calls", "batch", "peak_rss_bytes",
    "tensorflow", "python", "node_type", "host", "failure", "damage",
]


def local_time(ts: float) -> str:
    """A Unix time as local ISO 8601 with its offset: 2026-11-03T14:22:05+01:00."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts)) + _offset(ts)


def _offset(ts: float) -> str:
    seconds = time.localtime(ts).tm_gmtoff
    sign = "+" if seconds >= 0 else "-"
    hours, minutes = divmod(abs(seconds) // 60, 60)
    return f"{sign}{hours:02d}:{minutes:02d}"


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 6)  # microseconds: below what a clock here resolves


def summary_dict(run: RunSummary) -> dict[str, Any]:
    """A history list row for --json: seconds and bytes as numbers."""
    out: dict[str, Any] = {
        "id": run.id, "launched_at": run.launched_at, "launched": local_time(run.launched_at),
        "source": run.source, "model": run.model, "status": run.status, "failed_phase": run.failed_phase,
        "settings": run.settings_summary, "time_to_ready": run.time_to_ready, "peak_rss": run.peak_rss,
        "assumed_input_shape": run.assumed_inputs,
    }
    if run.status == DAMAGED:
        out["damage"] = run.damage
    return out


def run_dict(run: ExportedRun) -> dict[str, Any]:
    """A whole run for JSON: the record as `tflaunch bench --json` prints it, with its id,
    source and memory samples; a damaged one as its summary and the reason."""
    if run.record is None:
        return {**summary_dict(run.summary), "status": DAMAGED, "damage": run.damage or run.summary.damage}
    return {"id": run.summary.id, "source": run.summary.source, "launched": local_time(run.record.launched_at),
            **run.record.to_dict(), "memory_samples": [[round(t, 6), rss] for t, rss in run.record.samples],
            "gpu_memory_samples": [[round(t, 6), {str(gpu): size for gpu, size in sorted(used.items())}]
                                   for t, used in run.record.gpu_samples]}


def gpu_columns(runs: Iterable[ExportedRun]) -> list[tuple[str, int, str]]:
    """(CSV column, GPU index, which peak) for every GPU any of the runs has a figure for:
    the process tree's peak (NVML) and TensorFlow's allocator peak, per device."""
    used: set[int] = set()
    allocator: set[int] = set()
    for run in runs:
        if run.record is not None:
            used |= set(run.record.gpu_peaks)
            allocator |= set(run.record.allocator_peaks)
    out = []
    for gpu in sorted(used | allocator):
        if gpu in used:
            out.append((f"gpu{gpu}_peak_bytes", gpu, "used"))
        if gpu in allocator:
            out.append((f"gpu{gpu}_allocator_peak_bytes", gpu, "allocator"))
    return out


def _gpu_cells(record: RunRecord | None, columns: list[tuple[str, int, str]]) -> list[int | None]:
    if record is None:
        return [None] * len(columns)
    peaks = {"used": record.gpu_peaks, "allocator": record.allocator_peaks}
    return [peaks[kind].get(gpu) for _, gpu, kind in columns]


def csv_row(run: ExportedRun, phases: list[str]) -> list[Any]:
    """The row's cells up to the GPU columns, with a duration for each of `phases`."""
    summary, record = run.summary, run.record
    if record is None:
        width = len(COLUMNS_BEFORE_PHASES) + len(phases) + len(COLUMNS_AFTER_PHASES)
        return [summary.id, local_time(summary.launched_at), summary.launched_at, summary.source, summary.model,
                DAMAGED, *[None] * (width - 7), run.damage or summary.damage]
    latency = record.latency if record.latency.get("n") else {}
    failure = record.failure.message if record.failure else None
    node = record.node or TrialNode()  # off a cluster: no node type, no host
    return [
        summary.id, local_time(record.launched_at), record.launched_at, summary.source, record.subject,
        record.status.value, record.failed_phase, record.config.summary(), bool(record.assumed_inputs),
        _seconds(record.time_to_ready), _seconds(record.other_time),
        *[_seconds(_duration(record, p)) for p in phases],
        _seconds(latency.get("median")), _seconds(latency.get("p90")), latency.get("n"),
        record.fed_batch if latency else None, record.peak_rss,
        record.environment.tensorflow, record.environment.python,
        node.node_type, node.host, failure, None,
    ]


def _duration(record: RunRecord | None, name: str) -> float | None:
    phase = record.phase(name) if record is not None else None
    return phase.duration if phase is not None else None


def phase_columns(runs: Iterable[ExportedRun]) -> list[str]:
    """The phases any run reached (a model's, a program's compile, data, first step,
    marks...): a column each, from the union, empty where a run lacks one."""
    return phase_rows(run.record for run in runs if run.record is not None)


def anatomy_columns(runs: Iterable[ExportedRun]) -> list[str]:
    """The anatomy parts any run has (an anatomy run's first step or call), in one order."""
    keys = [p.key for run in runs if run.record is not None and run.record.anatomy is not None
            for p in run.record.anatomy.parts]
    return [*dict.fromkeys(keys), "not_attributed"] if keys else []


def _anatomy_cells(record: RunRecord | None, columns: list[str]) -> list[Any]:
    """The anatomy's phase, then each part's seconds (empty where the run has none)."""
    if not columns:
        return []
    anatomy = record.anatomy if record is not None else None
    if anatomy is None:
        return [None] * (len(columns) + 1)
    seconds: dict[str, float] = {p.key: p.seconds for p in anatomy.parts}
    if anatomy.error is None:
        seconds["not_attributed"] = anatomy.not_attributed
    return [anatomy.phase, *(_seconds(seconds.get(key)) for key in columns)]


def to_csv(runs: Iterable[ExportedRun]) -> str:
    """The columns with a PHASE_s column for each phase any run reached, then a peak column
    per GPU (gpu_columns) where any run used a GPU, and an anatomy run's parts
    (anatomy_phase, anatomy_PART_s)."""
    runs = list(runs)
    gpus = gpu_columns(runs)
    phases = phase_columns(runs)
    parts = anatomy_columns(runs)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*COLUMNS_BEFORE_PHASES, *(f"{name}_s" for name in phases), *COLUMNS_AFTER_PHASES,
                     *(name for name, _, _ in gpus),
                     *(["anatomy_phase", *(f"anatomy_{key}_s" for key in parts)] if parts else [])])
    for run in runs:  # the reviews' cells: true/false, empty
        writer.writerow([csv_cell(cell) for cell in (*csv_row(run, phases), *_gpu_cells(run.record, gpus),
                                                      *_anatomy_cells(run.record, parts))])
    return out.getvalue()
