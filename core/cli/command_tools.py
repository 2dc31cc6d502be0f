"""What every command does the same way: a line to the user, a refusal (in JSON too when a
script asked for JSON), and the run history opened without ever stopping a run."""

from __future__ import annotations

import json
import sys

from ..store.history import History, HistoryError, default_history
from .arguments import failure_json


def open_history(enabled: bool = True) -> tuple[History | None, HistoryError | None]:
    """The user's history, or None and why: without one (disabled, locked, damaged) runs still
    run, and the command says after its results that they were not stored (RunRecorder.note)."""
    if not enabled:
        return None, None
    try:
        return default_history(), None
    except HistoryError as exc:
        return None, exc


def say(message: str) -> None:
    print(f"tflaunch: {message}", file=sys.stderr)


def refuse(kind: str, message: str, as_json: bool) -> int:
    """Nothing ran: the reason, in JSON too when a script asked for JSON."""
    if as_json:
        print(json.dumps(failure_json(kind, message), indent=2))
    say(message)
    return 2
