"""The program's own output, live, where a person watches: each line of the child's stderr
(and a program's stdout) on our stderr, prefixed, as it arrives.

Only read, never changed: the child's stdout and stderr stay the pipes the engine reads
(no terminal, no variable that alters its buffering), so what it prints and how it behaves
are what an unwatched run's are. A program whose stdout is a pipe buffers its prints, so
they appear when it flushes, as they would in a log.
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..run.record import RunRecord
from ..run.watcher import Output, Watcher

MARGIN = "│ "  # tells the program's lines from tflaunch's own


def echo_wanted(quiet: bool, stream: TextIO | None = None) -> bool:
    """Shown on a terminal unless --quiet; never into a file or a pipe, which a script reads."""
    stream = stream if stream is not None else sys.stderr
    return not quiet and stream.isatty()


class Echo(Watcher):
    def __init__(self, stream: TextIO | None = None, prefix: str = "") -> None:
        self.stream, self.prefix = stream if stream is not None else sys.stderr, prefix

    def changed(self, record: RunRecord, output: Output | None) -> None:
        if output is None or not output.log:
            return
        # "\r\033[K" first: the progress line a terminal shows is cleared, redrawn after.
        self.stream.write("".join(f"\r\033[K{self.prefix}{MARGIN}{line}\n" for line in output.log))
        self.stream.flush()
