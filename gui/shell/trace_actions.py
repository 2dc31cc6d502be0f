"""Export as trace…: the runs the current tab shows as a Chrome trace, which Perfetto
(ui.perfetto.dev) and chrome://tracing open, one process track per run.

Which runs: the Run tab's finished run, the Compare tab's runs, or the runs selected in
History. The file is core's (core/report/trace_export.py); this only asks where.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMainWindow

from tflaunch.core.report import exports
from tflaunch.core.report.trace_export import trace_json
from tflaunch.core.run.record import RunRecord

from ..widgets import file_dialogs

if TYPE_CHECKING:
    from .window_host import WindowHost

NOTHING = ("Nothing to export as a trace here: show a finished run in the Run tab, compare runs, or select runs "
           "in History.")


def shown_runs(w: WindowHost) -> list[RunRecord]:
    """The finished runs the current tab shows (a tab not built yet shows none)."""
    current = w.tabs.currentWidget()
    if current is w.run_view:
        record = w.run_view.record
        return [record] if record is not None and record.finished_at is not None else []
    if w.tabs.is_built("Compare") and current is w.compare_view:
        return list(w.compare_view.runs)
    if w.tabs.is_built("History") and current is w.history_view:
        return w.history_view.load(w.history_view.selected_ids())
    return []


def trace_path(typed: Path) -> Path:
    """The name typed, with .trace.json added when it names no format of runs."""
    return typed if exports.guess(exports.RUNS, typed) is not None else typed.with_name(f"{typed.name}.trace.json")


def export_trace(w: WindowHost, widget: QMainWindow) -> None:
    records = shown_runs(w)
    if not records:
        w.say(NOTHING)
        return
    trace = exports.find(exports.RUNS, exports.TRACE)
    filters = [text for text, fmt, _ in exports.file_filters(exports.RUNS) if fmt is trace]
    stem = f"tflaunch-run-{records[0].history_id}" if len(records) == 1 else f"tflaunch-{len(records)}-runs"
    path, _ = file_dialogs.save_file(widget, "review", "Export as trace", f"{stem}.trace.json", ";;".join(filters))
    if path:
        save_trace(w, records, trace_path(Path(path)))


def save_trace(w: WindowHost, records: list[RunRecord], path: Path) -> None:
    try:
        path.write_bytes(exports.encoded(trace_json([(r.history_id, r) for r in records]), path))
    except OSError as exc:
        w.say(f"Trace not written to {path}: {exc.strerror or exc}. Choose another folder or name.")
        return
    runs = "1 run" if len(records) == 1 else f"{len(records)} runs"
    w.say(f"Trace of {runs} written to {path}: open it in ui.perfetto.dev or chrome://tracing.")
