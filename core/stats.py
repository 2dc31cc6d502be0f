"""Summaries of repeated measurements: medians and percentiles, which skewed start-up
times (a slow first read, a busy neighbour) do not pull around as means would."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Fewer runs than this on a side give no spread worth comparing: a difference between them
# may be a cold first run or a busy neighbour, so it is shown as a number, never as a result.
MIN_RUNS_TO_COMPARE = 3


@dataclass(frozen=True)
class Spread:
    n: int
    median: float
    low: float
    high: float
    q1: float
    q3: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    def to_dict(self) -> dict[str, float]:
        return {"n": self.n, "median": self.median, "min": self.low, "max": self.high}

    def overlaps(self, other: Spread) -> bool:
        """Whether the two ranges (min to max) share a value: a difference of medians inside
        both is within the noise of the runs."""
        return self.low <= other.high and other.low <= self.high


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    if len(ordered) == 1:
        q1 = q3 = ordered[0]
    else:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return Spread(len(ordered), statistics.median(ordered), ordered[0], ordered[-1], q1, q3)


def summarize(values: Iterable[float | None]) -> Spread | None:
    """The spread of the values that exist; None when there are none."""
    present = [v for v in values if v is not None]
    return spread(present) if present else None
