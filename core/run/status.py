"""How a run stands and how each of its phases stands: the two states every view reads.

Kept apart from the record (record_data.py) so that what only compares a status, such as
opening the history or a sweep's plan, does not import the record and its payload types,
which the window's first frame never needs.
"""

from __future__ import annotations

from enum import Enum


class PhaseState(str, Enum):
    WAITING = "waiting"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class RunStatus(str, Enum):
    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed out"
    INTERRUPTED = "interrupted"  # the app died during the run; found so in the history
