"""A run as JSON data: what `tflaunch bench --json` prints and exports carry.

A program's settings leave out the ones only a model's probe reads; its subject, ready
point, marks and whether tflaunch stopped it are there beside the phases.
"""

from __future__ import annotations

from typing import Any

from . import words
from .record_data import RecordData


def config_dict(record: RecordData) -> dict[str, Any]:
    """The settings; a program's without the ones only a model's probe reads."""
    data = record.config.to_dict()
    if record.is_program:
        for name in ("model", "batch", "inputs", "signature", "imports", "unsafe_deserialization", "call",
                     "jit_compile"):
            data.pop(name, None)
    return data


def record_dict(record: RecordData) -> dict[str, Any]:
    """Everything a run measured and said, with each phase as it ended."""
    return {
        "subject": {"kind": record.subject_type.words, "spec": record.config.subject,
                    **({"until": record.config.until, "workdir": record.config.workdir}
                       if record.is_program else {"call": record.config.call})},
        "stopped_at_ready": record.stopped_at_ready,
        "config": config_dict(record),
        "launched_at": record.launched_at,
        "status": record.status.value,
        "time_to_ready": record.time_to_ready,
        "other_time": record.other_time,
        "assumed_input_shape": bool(record.assumed_inputs),
        "warnings": words.warnings(record),
        "notes": words.notes(record),
        "page_cache": None if record.page_cache is None else record.page_cache.to_dict(),
        "cache_pack": None if record.cache_pack is None else record.cache_pack.to_dict(),
        "watching": None if record.watching is None else record.watching.to_dict(),
        "steady_per_call": ({**record.latency, **({} if record.is_program else {"batch": record.fed_batch})}
                            if record.latency.get("n") else None),
        "peak_rss": record.peak_rss,
        "gpu_peaks": {str(gpu): size for gpu, size in sorted(record.gpu_peaks.items())},
        "allocator_peaks": {str(gpu): size for gpu, size in sorted(record.allocator_peaks.items())},
        "phases": {
            name: {"state": p.state.value, "duration": p.duration, "rss": p.rss,
                   "peak_rss": p.peak_rss, **({"latency": p.latency} if p.latency else {}),
                   **({"parts": p.parts} if p.parts else {}),
                   **({"count": p.count} if p.count is not None else {}),
                   **({"read_bytes": p.read_bytes, "rchar": p.rchar} if p.read_bytes is not None else {})}
            for name, p in record.phases.items()
        },
        "marks": [{"name": name, "at": at} for name, at in record.marks],
        # asked warm: how it started, why not warm, whether it started (and waited for) the server
        "warm_start": None if record.warm_start is None else {
            "started": words.start_kind(record), "cold_because": record.warm_start.cold_because,
            "server_started": record.warm_start.server_started,
            "server_import_s": record.warm_start.server_import_s},
        "settings": record.settings.to_dict(),
        "environment": record.environment.to_dict(),
        "model": record.model.to_dict(),
        "imports": record.imports.to_dict() if record.imports is not None else {},
        "anatomy": record.run_anatomy.to_dict(run=True) if record.run_anatomy is not None else None,
        "failure": None if record.failure is None else {
            "kind": record.failure.kind, "phase": record.failed_phase,
            "message": record.failure.message, "detail": record.failure.detail},
        "exit_code": record.exit_code,
        "exit_signal": record.exit_signal,
        "malformed_lines": record.malformed_lines,
        "late_events": record.late_count,  # after the probe's result: ignored, see notes
        "stderr_tail": list(record.stderr_tail)[-20:],
    }
