"""What watching costs the program, counted where it is spent: in the program's own process.

Two parts, each read with the monotonic clock around tflaunch's own code only:
- setup: the launch hook's start (its imports and the observer's install) and the hooks put
  into TensorFlow and Keras as their imports finish;
- hooks: every hook's start and end, around the program's calls of the methods watched
  (the wrapper's own frame on Python 3.8-3.11, sys.monitoring's callbacks on 3.12+).

Their sum, reported at the ready point, is a floor under what watching adds to the time to
ready: it leaves out what no clock inside the process can see (the interpreter's dispatch
into a callback, caches the hooks' code displaced, the parent's sampling on a shared CPU).
An outside comparison of plain and watched runs (tests/benchmarks/bench_program_overhead.py)
measures the whole, within that machine's noise; this figure is exact in every run.
Increments from two threads at once may lose one; the figure is a floor either way.
Standard library only, Python 3.8: it runs in the user's interpreter.
"""

import time
from typing import Any, Dict

clock = time.perf_counter


class Cost:
    __slots__ = ("setup", "hooks", "calls")

    def __init__(self) -> None:
        self.setup = 0.0
        self.hooks = 0.0
        self.calls = 0

    def hooked(self, seconds: float) -> None:
        self.hooks += seconds
        self.calls += 1

    def fields(self) -> Dict[str, Any]:
        """The event's fields (events.py, kind ``watching``)."""
        return {"setup": self.setup, "hooks": self.hooks, "calls": self.calls}


COST = Cost()  # this process's, the one every hook adds to

