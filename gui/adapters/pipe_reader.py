"""PipeReader: one of a child's pipes, read on the GUI thread as fast as the child writes.

QProcess reads a child's output one pipe-full (64 KiB) per turn of the event loop, and a
child that writes more waits for the next turn: one 50 MB line took 800 turns, seconds in a
window that paints, before the child could go on to its ready point. A PipeReader empties
its pipe on each turn, for at most a slice of the turn, and hands the chunks to core's
session as they come: its LineBuffer keeps a bounded head of a long line, so a runaway
writer costs neither memory nor the window's responsiveness.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier

from tflaunch.core.run.watcher import Output

CHUNK = 64 * 1024  # a Linux pipe's capacity: one read takes all it holds
# Per turn of the event loop: a child that never stops writing gets this much of each turn,
# the window the rest. A pipe that still holds bytes wakes the reader again next turn.
TURN_BUDGET_S = 0.02


class PipeReader(QObject):
    """Reads a pipe's read end (non-blocking) until its writers close it; owns the descriptor."""

    def __init__(self, fd: int, feed: Callable[[bytes], Output], deliver: Callable[[Output], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        os.set_blocking(fd, False)
        self._fd: int | None = fd
        self._feed, self._deliver = feed, deliver
        self._notifier: QSocketNotifier | None = QSocketNotifier(fd, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_readable)

    def _on_readable(self) -> None:
        self.read(TURN_BUDGET_S)

    def read(self, seconds: float) -> None:
        """What the pipe holds now, for at most `seconds` (one chunk at least), delivered
        once; at the pipe's end (every writer gone) the reader closes."""
        out = Output()
        deadline = time.monotonic() + seconds
        while self._fd is not None:
            try:
                chunk = os.read(self._fd, CHUNK)
            except BlockingIOError:
                break  # empty for now
            except OSError:
                chunk = b""
            if not chunk:
                self.close()
                break
            out.extend(self._feed(chunk))
            if time.monotonic() >= deadline:
                break
        if out.events or out.log or out.stop:
            self._deliver(out)

    def close(self) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
