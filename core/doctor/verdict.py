"""What a remedy measurably does on this model: seconds saved, with a 95 % interval.

The saving is median(baseline) − median(arm), its interval a seeded percentile bootstrap
(start-up times are skewed: no distribution is assumed, and a report regenerated from the
same runs says the same). A remedy is recommended only when the whole interval is a
saving larger than MIN_SAVING of the baseline and MIN_SAVING_S; a verdict needs MIN_RUNS
runs of each.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ..units import format_duration

MIN_RUNS = 3
MIN_SAVING = 0.02  # of the baseline's median: below this a "saving" is not worth a setting
# Nor below this many seconds: process starts jitter by milliseconds on a busy machine.
MIN_SAVING_S = 0.01
RESAMPLES = 2000


@dataclass(frozen=True)
class Saving:
    seconds: float  # baseline median − arm median; negative: the arm costs time
    low: float
    high: float
    baseline: float  # the baseline's median, seconds
    runs: int  # of the arm

    @property
    def significant(self) -> bool:
        return self.low > max(MIN_SAVING * self.baseline, MIN_SAVING_S)

    @property
    def costly(self) -> bool:
        """Surely slower by as much as a saving must be to count: a few milliseconds of a
        busy machine's jitter between identical arms is not called a cost either."""
        return self.high < -max(MIN_SAVING * self.baseline, MIN_SAVING_S)

    def describe(self, of: str = "time to ready") -> str:
        """The verdict in words: a saving as a saving, a cost as a cost ("72 ms slower"),
        never a negative saving; `of`: what the figures are of (an anatomy arm's: its phase)."""
        interval = f"95 % CI {interval_text(self.low, self.high)}"
        if self.significant:
            return (f"measured: saves {format_duration(self.seconds)} ({interval}) here, "
                    f"{self.seconds / self.baseline:.0%} of its {of}")
        if self.costly:
            return f"measured: costs {format_duration(-self.seconds)} ({interval}) here"
        if self.low > 0:  # surely faster, by too little to be worth a setting
            return (f"no gain worth a setting: {way(self.seconds)}, under {MIN_SAVING:.0%} of its {of} "
                    f"or {format_duration(MIN_SAVING_S)} ({interval})")
        if self.high < 0:  # surely slower, by less than a saving would have to be
            return (f"no gain: {way(self.seconds)}, a cost under {MIN_SAVING:.0%} of its {of} "
                    f"or {format_duration(MIN_SAVING_S)} ({interval})")
        return f"no gain: {way(self.seconds)}, within the noise ({interval})"


def way(seconds: float) -> str:
    """A difference to the baseline as a direction: "120 ms faster", "45 ms slower"."""
    if seconds == 0:
        return "no faster"
    return f"{format_duration(abs(seconds))} {'faster' if seconds > 0 else 'slower'}"


def interval_text(low: float, high: float) -> str:
    """An interval of savings in the same words: "40 ms to 60 ms faster", "10 ms slower to
    30 ms faster"."""
    if low >= 0:
        return f"{format_duration(low)} to {format_duration(high)} faster"
    if high <= 0:
        return f"{format_duration(-high)} to {format_duration(-low)} slower"
    return f"{format_duration(-low)} slower to {format_duration(high)} faster"


def saving(arm: Sequence[float], baseline: Sequence[float], seed: int = 0) -> Saving | None:
    """The arm's saving against the baseline; None with fewer than MIN_RUNS of either."""
    if len(arm) < MIN_RUNS or len(baseline) < MIN_RUNS:
        return None
    rng = random.Random(seed)
    draws = sorted(statistics.median(rng.choices(baseline, k=len(baseline)))
                   - statistics.median(rng.choices(arm, k=len(arm))) for _ in range(RESAMPLES))
    base = statistics.median(baseline)
    return Saving(base - statistics.median(arm), draws[int(0.025 * (RESAMPLES - 1))],
                  draws[int(0.975 * (RESAMPLES - 1))], base, len(arm))


def verdict_text(result: Saving | None, runs: int) -> str:
    if result is None:
        return f"not enough runs for a verdict ({runs} of {MIN_RUNS})"
    return result.describe()
