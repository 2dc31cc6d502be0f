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


class Channel:
    def __init__(self) -> None:
        sys.stdout.flush()
        self._file = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        os.dup2(2, 1)

    def emit(self, event: str, phase: str, **fields: Any) -> None:
        record = {"v": PROTOCOL_VERSION, "ts": time.time(), "phase": phase, "event": event, **fields}
        self._file.write(json.dumps(record, default=str) + "\n")
        self._file.flush()
