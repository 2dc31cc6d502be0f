"""How far the doctor has got and about how long it has left, from what its runs took.

Fed the doctor's own callbacks (its `say` at each stage, its `on_trial` after each run of
a sweep) and a clock, it says "arm 3 of 8 (onednn=off), round 2 of 6: 1.23 s; about 40 s
left". The time left is the median run so far times the runs still planned: the arms'
sweep, then warm start's launches (about two runs a repeat); a final A/B of the combined
remedies follows only if one helped, so before it begins the estimate says it may.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..units import format_duration


def about(seconds: float) -> str:
    """A rough time: "40 s", "2 min 5 s", "1 min" (no hundredths for an estimate)."""
    if seconds < 59.5:
        return f"{max(1, round(seconds))} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min" + (f" {rest} s" if rest else "")


@dataclass
class DoctorProgress:
    repeat: int  # measured runs of each arm
    warm: bool  # warm start is measured after the arms
    clock: Callable[[], float] = time.monotonic
    durations: list[float] = field(default_factory=list)  # each run's wall time, seconds
    total: int = 0  # runs of the sweep under way
    done: int = 0
    _mark: float | None = None
    _examining: bool = False
    _verifying: bool = False
    _warm_started: bool = False

    @property
    def warm_launches(self) -> int:
        """Warm start's launches: cold and warm, alternated, and the one that starts the server."""
        return 2 * self.repeat + 1

    def stage(self, text: str) -> None:
        """The doctor said what it starts now (its `say`)."""
        now = self.clock()
        if self._examining and self._mark is not None:  # the first run, with the user's settings
            self.durations.append(now - self._mark)
        self._examining = text.startswith("examining")
        self._verifying = self._verifying or text.startswith("verifying")
        if text.startswith("measuring warm start") and not self._warm_started:
            self._warm_started = True
            self.total, self.done = self.warm_launches, 0  # its launches are counted as they end
        self._mark = now

    def run_ended(self) -> str | None:
        """A run outside the sweeps ended (the doctor's watcher): during warm start, which of
        its launches it was and the time left; None before, where stage() and trial() say it."""
        if not self._warm_started:
            return None
        now = self.clock()
        if self._mark is not None:
            self.durations.append(now - self._mark)
        self._mark = now
        self.done = min(self.done + 1, self.total)
        return f"warm start: launch {self.done} of {self.total}; {self.left()}"

    def trial(self, sweep: Any, trial: Any, value: float | None) -> str:
        """A run of a sweep ended (its `on_trial`): where the doctor is, and the time left."""
        now = self.clock()
        if self._mark is not None:
            self.durations.append(now - self._mark)
        self._mark = now
        arms = len(sweep.candidates)
        rounds = sweep.plan.warmup + sweep.plan.repeat
        round_index, place = divmod(trial.number - 1, arms)
        self.total, self.done = sweep.planned_without_racing, sweep.trials_run
        shown = format_duration(value) if value is not None else "failed"
        where = (f"{'Final A/B: ' if self._verifying else ''}arm {place + 1} of {arms} ({trial.candidate.key}"
                 f"{', warm-up' if trial.warmup else ''}), round {round_index + 1} of {rounds}: {shown}")
        return f"{where}; {self.left()}"

    def left(self) -> str:
        """About how long the runs still planned take, at the median run's pace so far."""
        if not self.durations:
            return "time left not known yet"
        runs = max(self.total - self.done, 0)
        if self.warm and not self._warm_started:
            runs += self.warm_launches
        seconds = statistics.median(self.durations) * runs
        after = "" if self._verifying else ", more if a final A/B of the remedies that helped follows"
        return f"about {about(seconds)} left{after}"
