"""What watching cost a program, as its own process counted it up to the ready point
(probe/observer/cost.py): the launch hook's set-up and the hooks' time around the calls
they watched. A floor under watching's whole cost, exact in every run; the rest (dispatch,
caches, the parent's sampling) only an outside comparison of plain and watched runs shows
(tests/benchmarks/bench_program_overhead.py), within a machine's noise."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..units import format_duration
from . import read_as

MAX_CALLS = 1 << 40


@dataclass(frozen=True)
class WatchCost:
    setup: float  # s: the launch hook's start and the hooks put in at TensorFlow's and Keras' imports
    hooks: float  # s: the hooks' own time around the calls they watched
    calls: int  # watched calls

    @property
    def total(self) -> float:
        return self.setup + self.hooks

    def to_dict(self) -> dict[str, Any]:
        return {"setup": self.setup, "hooks": self.hooks, "calls": self.calls}

    @classmethod
    def of(cls, data: Any) -> WatchCost | None:
        """A stored or reported description, each figure read as its type; None unless all are."""
        if not isinstance(data, Mapping):
            return None
        setup, hooks = read_as.seconds(data.get("setup")), read_as.seconds(data.get("hooks"))
        calls = read_as.count(data.get("calls"), below=MAX_CALLS)
        return None if setup is None or hooks is None or calls is None else cls(setup, hooks, calls)

    def words(self, time_to_ready: float | None, ready: str) -> str:
        """One sentence: how much of the time to `ready` ("its first training step") watching took."""
        share = f" ({self.total / time_to_ready:.1%})" if time_to_ready else ""
        return (f"Watching took {format_duration(self.total)} of the program's own time to {ready}{share}: "
                f"the launch hook {format_duration(self.setup)}, {self.calls:,} watched calls "
                f"{format_duration(self.hooks)} (a floor: what no clock in the program sees is not in it).")
