"""Statistics for sweeps: how sure a ratio to the baseline is, and when spread hides it.

The confidence interval of a ratio of medians comes from a bootstrap, which assumes no
particular distribution (start-up times are skewed).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ..stats import Spread

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Ratio:
    """How many times better than the baseline (baseline / value, for lower-is-better)."""

    estimate: float
    low: float
    high: float

    @property
    def clear(self) -> bool:
        """The interval does not include 1: better or worse, not a tie."""
        return self.low > 1 or self.high < 1


def ratio_to_baseline(values: Sequence[float], baseline: Sequence[float], seed: int = 0,
                      resamples: int = BOOTSTRAP_RESAMPLES, confidence: float = CONFIDENCE) -> Ratio:
    """median(baseline) / median(values), with a percentile bootstrap interval.

    Seeded, so the same measurements always give the same interval (a report must not
    change when it is regenerated).
    """
    if not values or not baseline:
        raise ValueError("both groups need values")
    rng = random.Random(seed)
    estimate = statistics.median(baseline) / statistics.median(values)
    draws = sorted(
        statistics.median(rng.choices(baseline, k=len(baseline)))
        / statistics.median(rng.choices(values, k=len(values)))
        for _ in range(resamples)
    )
    tail = (1 - confidence) / 2
    return Ratio(estimate, draws[int(tail * (resamples - 1))], draws[int((1 - tail) * (resamples - 1))])


def is_noisy(a: Spread, b: Spread) -> bool:
    """The spread inside either group is larger than the difference between them."""
    return max(a.iqr, b.iqr) > abs(a.median - b.median)
