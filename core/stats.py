"""Summaries of repeated measurements."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"n": self.n, "median": self.median, "min": self.low, "max": self.high}


def summarize(values: Iterable[float | None]) -> Summary | None:
    """Median and min–max of the values that exist; None when there are none."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    return Summary(len(present), statistics.median(present), min(present), max(present))
