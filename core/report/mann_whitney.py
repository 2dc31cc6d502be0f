"""The Mann-Whitney U test, two-sided: do two sets of timings come from one distribution?

It compares ranks, not means, so one slow outlier (a page fault storm, a CI neighbour)
moves it little; asv decides regressions with it. Exact for small samples without ties
(the distribution of U counted, as scipy's method="exact"), else the normal approximation
with the tie correction and a continuity correction (scipy's method="asymptotic").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

EXACT_MOST = 25  # per side: counting U's distribution takes milliseconds up to this


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


@lru_cache(maxsize=64)
def _u_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n+m, n) orderings give U = 0, 1, ..., n*m (the coefficients of
    the Gaussian binomial [n+m choose n]): U(n, m) = U(n-1, m) + m, or U(n, m-1)."""
    if n == 0 or m == 0:
        return (1,)
    with_n = _u_counts(n - 1, m)
    without = _u_counts(n, m - 1)
    out = [0] * (n * m + 1)
    for u, count in enumerate(with_n):
        out[u + m] += count
    for u, count in enumerate(without):
        out[u] += count
    return tuple(out)


def smallest_p(n: int, m: int) -> float:
    """The smallest two-sided p the test can give for samples of n and m: below the
    threshold it is used at, or no difference, however large, can be significant."""
    return min(1.0, 2 / math.comb(n + m, n)) if n and m else 1.0


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """(U of `a`, two-sided p). ValueError on an empty sample."""
    n, m = len(a), len(b)
    if not n or not m:
        raise ValueError("Mann-Whitney U needs at least one value on each side")
    combined = [*a, *b]
    r = ranks(combined)
    u_a = sum(r[:n]) - n * (n + 1) / 2
    tied = len(set(combined)) < len(combined)
    if not tied and max(n, m) <= EXACT_MOST:
        counts = _u_counts(n, m)
        low = min(u_a, n * m - u_a)
        tail = sum(counts[: int(low) + 1])
        return u_a, min(1.0, 2 * tail / math.comb(n + m, n))
    total = n + m
    ties = sum(t ** 3 - t for t in _tie_sizes(combined))
    variance = n * m / 12 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:  # every value the same
        return u_a, 1.0
    z = (abs(u_a - n * m / 2) - 0.5) / math.sqrt(variance)
    return u_a, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _tie_sizes(values: Sequence[float]) -> list[int]:
    seen: dict[float, int] = {}
    for value in values:
        seen[value] = seen.get(value, 0) + 1
    return [count for count in seen.values() if count > 1]
