"""Watcher: what a caller hears about a run (started, changed with the Output of a chunk of the
child's pipes, ended), and Watchers, several heard in order.

Apart from the driver that calls them: the history's recorder and the app's window are
watchers, and the window's first frame needs the recorder, never the engine behind it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .events import Event
    from .record import RunRecord


@dataclass
class Output:
    """What one chunk of the child's output meant."""

    events: list[Event] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # stderr lines (a program's stdout too)
    stop: bool = False  # a program reached its ready point: the driver ends it (stop_program)

    def extend(self, other: Output) -> None:
        """Add what a later chunk meant (a driver that reads several chunks per turn)."""
        self.events.extend(other.events)
        self.log.extend(other.log)
        self.stop = self.stop or other.stop


class Watcher:
    """What a caller hears about a run; every method may be left as it is."""

    def started(self, record: RunRecord) -> None:
        """The child is about to start: the record has its time zero."""

    def changed(self, record: RunRecord, output: Output | None) -> None:
        """Events, log lines (output) or a memory sample (output None) arrived."""

    def ended(self, record: RunRecord) -> None:
        """The run is over and the record final."""


class Watchers(Watcher):
    """Several watchers heard in order (a recorder, then a progress display)."""

    def __init__(self, *watchers: Watcher) -> None:
        self.watchers = watchers

    def started(self, record: RunRecord) -> None:
        for w in self.watchers:
            w.started(record)

    def changed(self, record: RunRecord, output: Output | None) -> None:
        for w in self.watchers:
            w.changed(record, output)

    def ended(self, record: RunRecord) -> None:
        for w in self.watchers:
            w.ended(record)
