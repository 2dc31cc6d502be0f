"""A TF Serving warm-up file written or checked by the probe, in a child of the chosen
interpreter (the probe's serving warm-up mode).

The child is started, timed out, cancelled and read as every run's child is (one engine:
ProbeSession and the driver), with the run's whole environment; it answers with one
`serving_warmup` event, checked where it enters (events.py, warmup_report.py): a child
cannot make this module raise anything but WarmupError.
"""

from __future__ import annotations

import json
from typing import Any

from ..settings.child import PROBE_MAIN, probe_config
from ..settings.config import LaunchConfig
from .driver import run_sessions
from .record import RunStatus
from .session import ProbeSession
from .warmup_report import MAX_TEXT, RecordOutcome, WarmupError, WarmupReport, parse_report

__all__ = ["RecordOutcome", "WarmupError", "WarmupReport", "parse_report", "run_warmup", "warmup_command"]


def warmup_command(config: LaunchConfig, action: str, options: dict[str, Any]) -> list[str]:
    cfg = {**probe_config(config), "serving_warmup": options}
    return [config.python, str(PROBE_MAIN), "--serving-warmup", action, json.dumps(cfg)]


def run_warmup(config: LaunchConfig, action: str, options: dict[str, Any]) -> WarmupReport:
    """Write (action write) or replay (check) the model's warm-up file in a child."""
    session = ProbeSession(config, child=warmup_command(config, action, options))
    record = run_sessions([session])[0]
    if session.warmup_answer is not None:
        return session.warmup_answer
    if record.status is RunStatus.TIMED_OUT:
        raise WarmupError("timeout", f"The warm-up file's child took longer than {config.timeout:.0f} s; give "
                                     "more with --timeout SECONDS.")
    if session.probe_error is not None:
        raise WarmupError(session.probe_error.kind, session.probe_error.message)
    if record.failure is not None and record.failure.kind == "spawn_failed":
        raise WarmupError("launch_failed", f"{record.failure.message} Check --python.")
    if session.malformed_answer:
        raise WarmupError("malformed_answer", "The probe's answer about the warm-up file is malformed; the probe "
                                              "of this interpreter may be another tflaunch's.")
    tail = (list(record.stderr_tail) or ["no output"])[-1]
    raise WarmupError("probe_failed", f"The probe ended (exit code {record.exit_code}) without a word about the "
                                      f"warm-up file: {tail[:MAX_TEXT]}")
