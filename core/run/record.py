"""RunRecord: what one run did, and how tflaunch says it: its figures (record_data.py) with
its ending (ending.py), its words (words.py) and its JSON (record_json.py) as methods.

Those modules read RecordData, never this class, so the dependency points one way: a
record knows its views, the views know only the figures.
"""

from __future__ import annotations

from typing import Any

from . import words
from .ending import end_run
from .record_data import (
    LATE_EVENTS_KEPT,
    MAX_MARKS,
    MAX_PHASE_NAMES,
    STDERR_LINE_CHARS,
    STDERR_TAIL_BYTES,
    STDERR_TAIL_LINES,
    Failure,
    PhaseRecord,
    RecordData,
)
from .record_json import record_dict
from .run_kind import RunKind, run_kind
from .status import PhaseState, RunStatus

__all__ = ["LATE_EVENTS_KEPT", "MAX_MARKS", "MAX_PHASE_NAMES", "STDERR_LINE_CHARS", "STDERR_TAIL_BYTES",
           "STDERR_TAIL_LINES", "Failure", "PhaseRecord", "PhaseState", "RunRecord", "RunStatus"]


class RunRecord(RecordData):
    def finish(
        self,
        exit_code: int | None,
        exit_signal: int | None = None,
        *,
        cancelled: bool = False,
        timed_out: bool = False,
    ) -> None:
        """Close the run once the process is gone; decides status and the failed phase
        (ending.py holds the rules and the words)."""
        end_run(self, exit_code, exit_signal, cancelled=cancelled, timed_out=timed_out)
        if self.status is RunStatus.OK:
            self.forget_output()  # the tail says enough of a run that succeeded

    # -- in words (words.py) --------------------------------------------------------
    @property
    def steady_line(self) -> str | None:
        """Steady latency per call (or a program's step) with its batch, or None."""
        return words.steady_line(self)

    @property
    def warnings(self) -> list[str]:
        return [sentence for _, sentence in words.caveats(self)]

    @property
    def notes(self) -> list[str]:
        """What the launcher did and what the GPUs mean for start-up: facts, not doubts."""
        return words.notes(self)

    @property
    def inputs_line(self) -> str:
        return words.inputs_line(self)

    @property
    def kind(self) -> RunKind:
        """How it was measured besides its settings: plain, anatomy, warm... (run_kind.py)."""
        return run_kind(self)

    @property
    def start_kind(self) -> str | None:
        """A launch asked to start warm: "warm", or "cold" (the notes say why); else None."""
        return words.start_kind(self)

    @property
    def status_line(self) -> str:
        """A few words on where the run stands, for titles and big type."""
        return words.status_line(self)

    @property
    def environment_line(self) -> str:
        return words.environment_line(self)

    @property
    def headline(self) -> str:
        """One line a user can act on: how the run ended and, if it failed, why."""
        return words.headline(self)

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON data (bench --json, exports): record_json.py."""
        return record_dict(self)
