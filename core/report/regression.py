"""Did a start-up get slower? asv's rule, per figure (time to ready, each phase), on two
samples of fresh-process timings: a regression needs all three of

- Mann-Whitney U's two-sided p below `alpha` (asv: 0.002): the difference is not chance;
- the medians' ratio above `factor` (asv: 1.1): it is big enough to matter;
- the medians' difference above `min_difference` seconds: a 30 % change of 3 ms is noise
  in a process start, whatever its p.

A gate that cries wolf gets turned off, so what cannot be decided is said as such, never
called a regression: too few runs (so few that no p could fall below alpha), or a change
as large as the rule's but too noisy to be sure of.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from ..units import format_duration
from .mann_whitney import mann_whitney_u, smallest_p


class Outcome(str, Enum):
    SLOWER = "slower"  # a regression
    FASTER = "faster"
    SAME = "same"  # no change the rule counts
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Rule:
    alpha: float = 0.002
    factor: float = 1.1
    min_difference: float = 0.02  # seconds

    def words(self) -> str:
        return (f"slower when Mann-Whitney U gives p < {self.alpha:g}, the medians' ratio exceeds {self.factor:g} "
                f"and they differ by more than {format_duration(self.min_difference)}")


@dataclass(frozen=True)
class Verdict:
    """One figure compared: the samples' medians, how they relate, and what the rule says."""

    figure: str
    baseline: tuple[float, ...]
    candidate: tuple[float, ...]
    outcome: Outcome
    reason: str
    ratio: float | None = None
    p: float | None = None

    @property
    def baseline_median(self) -> float | None:
        return statistics.median(self.baseline) if self.baseline else None

    @property
    def candidate_median(self) -> float | None:
        return statistics.median(self.candidate) if self.candidate else None


def decide(figure: str, baseline: Sequence[float], candidate: Sequence[float], rule: Rule) -> Verdict:
    """The rule applied to one figure's timings (seconds)."""
    a, b = tuple(baseline), tuple(candidate)
    least = smallest_p(len(a), len(b))
    if least >= rule.alpha:
        return Verdict(figure, a, b, Outcome.UNDECIDED,
                       f"too few runs: with {len(a)} and {len(b)} the smallest p Mann-Whitney U can give is "
                       f"{least:.2g}, not below {rule.alpha:g}; measure more runs (--runs)")
    _, p = mann_whitney_u(a, b)
    base, cand = statistics.median(a), statistics.median(b)
    ratio = cand / base if base > 0 else (1.0 if cand == base else float("inf"))
    difference = cand - base
    size = f"{ratio:.2f}× ({'+' if difference >= 0 else '−'}{format_duration(abs(difference))})"
    change = f"{size}, p = {p:.2g}"
    if ratio > rule.factor and difference > rule.min_difference:
        if p < rule.alpha:
            return Verdict(figure, a, b, Outcome.SLOWER, f"slower: {change}", ratio, p)
        return Verdict(figure, a, b, Outcome.UNDECIDED,
                       f"too noisy: a change of {size} is as large as the rule's, but p = {p:.2g} is not below "
                       f"{rule.alpha:g}, so it may be chance; measure more runs (--runs) or on a quieter machine",
                       ratio, p)
    if ratio < 1 / rule.factor and -difference > rule.min_difference and p < rule.alpha:
        return Verdict(figure, a, b, Outcome.FASTER, f"faster: {change}", ratio, p)
    return Verdict(figure, a, b, Outcome.SAME, f"no change the rule counts: {change}", ratio, p)


def exit_code(verdicts: Sequence[Verdict], gate: str) -> int:
    """1 when any figure got slower, else 2 when the gated figure (time to ready) could not
    be decided, else 0. A phase too noisy to decide is said, but does not hold the gate:
    time to ready holds every phase."""
    if any(v.outcome is Outcome.SLOWER for v in verdicts):
        return 1
    if any(v.figure == gate and v.outcome is Outcome.UNDECIDED for v in verdicts):
        return 2
    return 0
