"""The event stream: JSON lines on a private duplicate of the original stdout.

fd 1 is pointed at stderr once the channel has its own copy, so prints from model code
and TensorFlow's C++ logs cannot corrupt the stream (protocol: tflaunch.core.run.events).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

PROTOCOL_VERSION = 1


def line(event: str, phase: str, ts: float, **fields: Any) -> str:
    """One protocol line, its newline included: the model probe's channel and a program's
    observer (observer/observe.py) both write these."""
    return json.dumps({"v": PROTOCOL_VERSION, "ts": ts, "phase": phase, "event": event, **fields}, default=str) + "\n"


class Channel:
    def __init__(self) -> None:
        sys.stdout.flush()
        self._file = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)

    def emit(self, event: str, phase: str, **fields: Any) -> None:
        self._file.write(line(event, phase, time.time(), **fields))
        self._file.flush()
