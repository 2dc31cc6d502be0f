"""Live phase progress on stderr: one rewritten line on a terminal, plain lines elsewhere."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from ..phases import SPAWN, label, step_unit
from ..run.record import PhaseState, RunRecord, RunStatus
from ..run.watcher import Output, Watcher
from ..units import format_bytes, format_duration


class Progress(Watcher):
    def __init__(self, stream: TextIO | None = None, prefix: str = "") -> None:
        # sys.stderr as it is now, not as it was when this module was imported (a test's
        # capture, since closed, or a redirection made after import).
        self.stream, self.prefix = stream if stream is not None else sys.stderr, prefix
        self.live = self.stream.isatty()
        self._reported: set[str] = set()
        self._last_draw = 0.0

    def changed(self, record: RunRecord, output: Output | None) -> None:
        for name, phase in record.phases.items():
            if phase.duration is not None and phase.state is PhaseState.DONE and name not in self._reported:
                self._reported.add(name)
                self._write(f"{self.prefix}{label(name):<16} {format_duration(phase.duration):>9}"
                            f"   RSS {format_bytes(phase.rss)}", final=True)
        now = time.monotonic()
        if self.live and record.status is RunStatus.RUNNING and now - self._last_draw > 0.1:
            self._last_draw = now
            current = record.current_phase or SPAWN
            running = record.phase(current)
            # A model between two phases has not started the next: count from the last end.
            ends = [p.started + p.duration for p in record.phases.values()
                    if p.started is not None and p.duration is not None]
            last_end = max(ends, default=record.launched_at)
            started = running.started if running is not None and running.started else last_end
            rss = record.samples[-1][1] if record.samples else None
            progress = running.progress if running is not None else None
            count = f"   {progress[0]}/{progress[1]} {step_unit(record.phases)}s" if progress else ""
            self._write(f"{self.prefix}{label(current):<16} {format_duration(time.time() - started):>9}"
                        f"   RSS {format_bytes(rss)}{count} …", final=False)

    def ended(self, record: RunRecord) -> None:
        if self.live:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def _write(self, text: str, final: bool) -> None:
        if self.live:
            self.stream.write("\r\033[K" + text + ("\n" if final else ""))
        elif final:
            self.stream.write(text + "\n")
        self.stream.flush()
