"""Helpers shared by the benchmarks: sample files, result files, ratios."""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench-results"


def save_sample(name: str, fmt: str, out: Path) -> Path:
    from tflaunch.core.run.formats import convert

    return convert(sys.executable, f"sample:{name}", [fmt], out)[fmt]


def report(name: str, data: dict) -> None:
    """Print the figures and keep them in bench-results/NAME.json."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2))
    print(json.dumps(data, indent=2))


def median_ratio(pairs: list[tuple[float, float]]) -> float:
    return statistics.median(a / b for a, b in pairs)


def pairs_wanted(default: int) -> int:
    """BENCH_PAIRS, for a closer figure on a quiet machine; the benchmark's own count otherwise."""
    raw = os.environ.get("BENCH_PAIRS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


def median_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free interval for the median (the sign test's order statistics): the
    k-th smallest and k-th largest values, k the largest with P(Binomial(n, 1/2) < k) at most
    half of 1 - confidence. None when n is too small for any (n < 6 at 95 %)."""
    ordered, n = sorted(values), len(values)
    tail, k, below = (1 - confidence) / 2, 0, 0.0
    while k < n and below + math.comb(n, k) / 2 ** n <= tail:
        below += math.comb(n, k) / 2 ** n
        k += 1
    return None if k == 0 else (ordered[k - 1], ordered[n - k])


# Python source printing the seconds since the OS started this process; pasted into the
# reference scripts so they measure from the same zero as the probe.
PRINT_PROCESS_AGE = r"""
with open("/proc/self/stat") as f:
    stat = f.read()
ticks = int(stat[stat.rindex(")") + 2:].split()[19])
print(time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
sys.stdout.flush()
os._exit(0)
"""


def alternated_pairs(ours: Callable[[], float], reference: Callable[[], float], pairs: int,
                     label: str) -> list[tuple[float, float]]:
    """(ours, reference) measured `pairs` times, swapping which goes first each time so
    drift and caching favour neither; one unrecorded round warms the page cache first."""
    ours(), reference()
    results = []
    for i in range(pairs):
        if i % 2 == 0:
            a = ours()
            b = reference()
        else:
            b = reference()
            a = ours()
        results.append((a, b))
        print(f"{label} pair {i + 1}: {a:.3f} s vs reference {b:.3f} s", file=sys.stderr)
    return results


def report_ratio(name: str, description: str, pairs: list[tuple[float, float]], labels: tuple[str, str],
                 target: float) -> None:
    """Report (ours, reference) pairs and their median ratio against an upper target."""
    ratio = median_ratio(pairs)
    report(name, {
        "benchmark": description,
        "pairs": [{labels[0]: a, labels[1]: b} for a, b in pairs],
        "median_ratio": ratio, "target": target, "met": ratio <= target,
    })
