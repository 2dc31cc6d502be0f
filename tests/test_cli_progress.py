"""The command line's live line: a long steady phase shows how many calls it has made."""

from __future__ import annotations

import io
import time

from tflaunch.core.cli.progress import Progress
from tflaunch.core.run import events as ev

from .builders import record_through


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_line_counts_steady_calls() -> None:
    stream = _Terminal()
    progress = Progress(stream)
    record = record_through(["import", "devices", "load", "trace", "first"], launched=time.time() - 10)
    record.apply(ev.PhaseStart(time.time(), "steady"))
    record.apply(ev.Progress(time.time(), "steady", 37, 100))
    progress.changed(record, None)
    live = stream.getvalue().rsplit("\r\033[K", 1)[-1]
    assert live.startswith("Steady state") and "37/100 calls" in live, live


def test_phases_without_a_count_show_none() -> None:
    stream = _Terminal()
    record = record_through(["import"], launched=time.time() - 3)
    record.apply(ev.PhaseStart(time.time(), "devices"))
    Progress(stream).changed(record, None)
    assert "calls" not in stream.getvalue()


def test_between_two_phases_the_live_line_names_the_next_and_counts_from_the_last_end() -> None:
    """A model's phases are the ones reached (issue 35): between devices and load there is no
    load phase yet to read a start from; the line names it and counts from devices' end."""
    stream = _Terminal()
    record = record_through(["import", "devices"], launched=time.time() - 3)  # devices ended 1 s after import
    Progress(stream).changed(record, None)
    live = stream.getvalue().rsplit("\r\033[K", 1)[-1]
    assert live.startswith("Load"), live
    assert live.split()[2] == "ms", "under a second since devices ended, not 3 s since launch"
