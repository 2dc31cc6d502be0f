"""Sides of a comparison: the runs of one setting, as a median, a range and a count.

Runs with the same settings in the same environment repeat one measurement, so a
comparison sets side against side, never run against run: each side's median, its range
(min to max) and its number of runs. A difference is a result only where both sides have
MIN_RUNS_TO_COMPARE runs and their ranges do not overlap; otherwise it is within the noise,
or there are too few runs to tell, and the words say which.
"""

from __future__ import annotations

import json
import string
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..run.record import RunRecord
from ..settings.config import LaunchConfig
from ..stats import MIN_RUNS_TO_COMPARE, Spread, summarize
from ..units import format_duration
from .compare import RATIO_FROM_S, SAME_WITHIN_S, differing_settings, row_value, run_ident, run_labels
from .subjects import measurement_kind, own_config

TOO_FEW = f"measure {MIN_RUNS_TO_COMPARE}+ to compare"


@dataclass(frozen=True)
class Side:
    """Runs with the same settings in the same environment: one side of a comparison."""

    runs: tuple[RunRecord, ...]
    letter: str  # A, B, ...: the name the picture's legend, table and chart share
    ident: str  # the runs' ids: "#3", "#3, #5, #7", "#3, #5, #7 and 2 more"

    @property
    def config(self) -> LaunchConfig:
        return self.runs[0].config

    @property
    def n(self) -> int:
        return len(self.runs)

    def spread(self, row: str) -> Spread | None:
        """The row's figures over the side's runs that have one (a failed run has none)."""
        return summarize(row_value(r, row) for r in self.runs)

    @property
    def typical(self) -> RunRecord:
        """The run whose time to ready is the side's median (the lower middle of an even
        count): the one a chart draws where it can draw one run."""
        timed = sorted((r for r in self.runs if r.time_to_ready is not None), key=lambda r: r.time_to_ready or 0.0)
        return timed[(len(timed) - 1) // 2] if timed else self.runs[0]


def _identity(record: RunRecord) -> str:
    """What makes runs one measurement repeated: the same kind of measurement (a program never
    joins a model's side), the same kind of run (run_kind.py: an anatomy run never joins a
    measured one, a warm launch never a cold one, nor one that paid the warm server's start
    the warm launches that did not), and the same settings that the subject reads, the
    program's command line among them (a hidden field of the other subject tells nothing apart)."""
    kind = record.kind
    return json.dumps([measurement_kind(record), [kind.anatomy, kind.start, kind.origin],
                       own_config(record.config).to_dict()], sort_keys=True)


def _letter(index: int) -> str:
    letters = string.ascii_uppercase
    return letters[index] if index < len(letters) else f"{letters[index // len(letters) - 1]}{letters[index % 26]}"


def _ident(runs: Sequence[RunRecord], members: Sequence[int]) -> str:
    ids = [run_ident(runs[i], i) for i in members]
    return ", ".join(ids) if len(ids) <= 3 else f"{', '.join(ids[:3])} and {len(ids) - 3} more"


def sides_of(runs: Sequence[RunRecord]) -> list[Side]:
    """The runs grouped by subject, kind of measurement, settings and environment, each
    group in the order its first run came; a run that never reported its environment joins
    a group with its settings."""
    groups: list[tuple[str, str | None, list[int]]] = []
    for i, record in enumerate(runs):
        config = _identity(record)
        env = record.environment_line if record.environment else None
        for g, (c, e, members) in enumerate(groups):
            if c == config and (e is None or env is None or e == env):
                members.append(i)
                groups[g] = (c, e or env, members)
                break
        else:
            groups.append((config, env, [i]))
    return [Side(tuple(runs[i] for i in members), _letter(g), _ident(runs, members))
            for g, (_, _, members) in enumerate(groups)]


def side_labels(sides: Sequence[Side], leave_out: Collection[str] = ()) -> list[str]:
    """A short name per side: its runs and the settings that tell it from the others
    (`#3, #5, #7 intra=1`), less those in `leave_out`, as run_labels names single runs."""
    return run_labels([side.runs[0] for side in sides], [side.ident for side in sides], leave_out)


def range_text(spread: Spread) -> str:
    """min–max with units on both ends: "990 ms–1.05 s"."""
    return f"{format_duration(spread.low)}–{format_duration(spread.high)}"


def measured(spread: Spread | None) -> str:
    """A side's figure: the median with its range and count, or that one run has none."""
    if spread is None:
        return "–"
    if spread.n == 1:
        return f"{format_duration(spread.median)} (1 run: no spread)"
    return f"{format_duration(spread.median)} ({range_text(spread)}, n={spread.n})"


def spread_text(spread: Spread | None) -> str:
    """The range alone, or why there is none."""
    if spread is None:
        return "–"
    return "1 run: no spread" if spread.n == 1 else range_text(spread)


def _signed(seconds: float) -> str:
    return ("−" if seconds < 0 else "+") + format_duration(abs(seconds))


@dataclass(frozen=True)
class Difference:
    """One row of one side against the same row of the baseline side."""

    value: Spread | None
    baseline: Spread | None

    @property
    def difference(self) -> float | None:
        return None if self.value is None or self.baseline is None else self.value.median - self.baseline.median

    @property
    def ratio(self) -> float | None:
        """How many times faster than the baseline (above 1 is better)."""
        if self.value is None or self.baseline is None or self.value.median <= 0:
            return None
        return self.baseline.median / self.value.median

    @property
    def enough(self) -> bool:
        """Both sides have the runs a spread needs."""
        return (self.value is not None and self.baseline is not None
                and min(self.value.n, self.baseline.n) >= MIN_RUNS_TO_COMPARE)

    @property
    def real(self) -> bool:
        """Enough runs, and the ranges apart: a win or a loss, not noise."""
        difference = self.difference
        return (self.enough and difference is not None and abs(difference) >= SAME_WITHIN_S
                and self.value is not None and self.baseline is not None and not self.value.overlaps(self.baseline))

    @property
    def faster(self) -> bool:
        return self.real and (self.difference or 0.0) < 0

    def versus(self) -> str:
        """The difference in words, claimed only where it is real."""
        if self.value is None or self.baseline is None or self.difference is None:
            return "–"
        if not self.enough:
            if self.value.n < MIN_RUNS_TO_COMPARE:
                return f"{self.value.n} run{'s' if self.value.n > 1 else ''}: {TOO_FEW}"
            return f"baseline has {self.baseline.n} run{'s' if self.baseline.n > 1 else ''}: {TOO_FEW}"
        if abs(self.difference) < SAME_WITHIN_S:
            return "same"
        if not self.real:
            way = "slower" if self.difference > 0 else "faster"
            return f"within the noise ({format_duration(abs(self.difference))} {way})"
        ratio = ""
        if self.ratio and min(self.value.median, self.baseline.median) >= RATIO_FROM_S:
            ratio = f", {self.ratio:.2f}× faster" if self.ratio >= 1 else f", {1 / self.ratio:.2f}× slower"
        return f"{_signed(self.difference)}{ratio}"

    def describe(self) -> str:
        """The side's figure, then the difference where there are runs enough to judge it."""
        text = measured(self.value)
        return f"{text}: {self.versus()}" if self.enough and self.difference is not None else text


def differences(sides: Sequence[Side], rows: Sequence[str], baseline: int = 0) -> list[dict[str, Difference]]:
    """For each side, {row: Difference against sides[baseline]}."""
    base = {row: sides[baseline].spread(row) for row in rows}
    return [{row: Difference(side.spread(row), base[row]) for row in rows} for side in sides]


def too_few_note(sides: Sequence[Side]) -> str | None:
    """What to say when a side has too few runs to compare; None when every side has enough."""
    few = [side for side in sides if side.n < MIN_RUNS_TO_COMPARE]
    if not few:
        return None
    if all(side.n == 1 for side in sides):
        return f"1 run each: no spread; {TOO_FEW}."
    counts = ", ".join(f"{side.letter} has {side.n} run{'s' if side.n > 1 else ' (no spread)'}" for side in few)
    return f"{counts}: {TOO_FEW}."


def apart(side: Side, other: Side) -> bool:
    """The two sides were measured in separate blocks, one after the other (all of one's
    runs before all of the other's): a drift of the machine between the blocks (a warming
    cache, other load) looks exactly like a difference of settings."""
    if side.n < 2 or other.n < 2:
        return False
    first, second = sorted((side, other), key=lambda s: min(r.launched_at for r in s.runs))
    return max(r.launched_at for r in first.runs) < min(r.launched_at for r in second.runs)


def block_note(sides: Sequence[Side], baseline: int = 0) -> str | None:
    """Which sides were measured in one block apart from the baseline's, and what to do;
    None when every side's runs are interleaved with the baseline's (or too few to judge)."""
    base = sides[baseline] if sides else None
    blocks = [side for i, side in enumerate(sides) if base is not None and i != baseline and apart(side, base)]
    if not blocks:
        return None
    names = ", ".join(side.letter for side in blocks)
    return (f"{names} {'was' if len(blocks) == 1 else 'were'} measured in one block, apart from the baseline "
            f"{base.letter if base else ''}'s runs: a drift between blocks looks like a difference.")


def headline(sides: Sequence[Side], labels: Sequence[str], baseline: int = 0) -> str:
    """The comparison in a sentence: the fastest side to ready only where it beat the
    baseline by more than the noise, with both medians, ranges and counts."""
    if len(sides) < 2:
        side = sides[0]
        return (f"One setting, {side.n} run{'s' if side.n > 1 else ''}: time to ready "
                f"{measured(side.spread('ready'))}")
    note = too_few_note([sides[baseline]]) if sides[baseline].n < MIN_RUNS_TO_COMPARE else None
    if note is not None or all(s.n < MIN_RUNS_TO_COMPARE for i, s in enumerate(sides) if i != baseline):
        return f"No verdict: {too_few_note(sides)}"
    base = sides[baseline].spread("ready")
    judged = [(i, Difference(s.spread("ready"), base)) for i, s in enumerate(sides)
              if i != baseline and s.n >= MIN_RUNS_TO_COMPARE and s.spread("ready") is not None]
    if base is None or not judged:
        return "No time to ready to compare: the runs did not get there."
    best, delta = min(judged, key=lambda pair: pair[1].value.median if pair[1].value else float("inf"))
    skipped = " (sides with fewer than 3 runs not judged)" if len(judged) < len(sides) - 1 else ""
    if delta.real and apart(sides[best], sides[baseline]):
        way = "faster" if delta.faster else "slower"
        return (f"No winner yet: {labels[best]}, {measured(delta.value)}, looks {way} than the baseline's "
                f"{measured(base)}, but the two were measured in separate blocks; re-measure them interleaved "
                f"(Sweep these settings) before trusting it{skipped}")
    if delta.faster and delta.value is not None and delta.difference is not None:
        timed = min(delta.value.median, base.median) >= RATIO_FROM_S
        ratio = f", {delta.ratio:.2f}× as fast" if delta.ratio and timed else ""
        return (f"Fastest to ready: {labels[best]}, {measured(delta.value)}, {format_duration(-delta.difference)} "
                f"faster than the baseline's {measured(base)}{ratio}{skipped}")
    if delta.real:  # every side is slower than the baseline, clearly
        return f"The baseline is fastest to ready: {measured(base)}; every other side is slower{skipped}"
    return (f"No clear difference in time to ready: the fastest, {labels[best]}, {measured(delta.value)}, is within "
            f"the noise of the baseline {measured(base)}{skipped}")


# Settings a sweep can vary, as the sweep's axis names them (core/sweep/axes.py).
_AXES = {"intra": "intra", "inter": "inter", "xla_auto": "xla_auto", "jit_compile": "jit_compile",
         "onednn": "onednn", "memory_growth": "memory_growth", "memory_limit_mb": "memory_limit",
         "allocator": "allocator", "cuda_cache": "cuda_cache", "xla_cache": "xla_cache",
         "cudnn_autotune": "cudnn_autotune", "module_loading": "module_loading", "visible_gpus": "gpus",
         "batch": "batch", "page_cache": "page_cache"}


def axis_text(name: str, value: object) -> str:
    """A setting's value as a sweep's --vary takes it (core/sweep/axes.py apply_value)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if name == "memory_limit_mb":
        return "none" if value is None else str(value)
    if name == "visible_gpus":
        return "all" if value is None else ("+".join(str(v) for v in value) or "none")  # type: ignore[attr-defined]
    return "default" if value is None else str(value)


def sweep_axes(base: LaunchConfig, configs: Sequence[LaunchConfig]) -> tuple[dict[str, list[str]], list[str]]:
    """What a sweep varies to measure these settings properly: {axis: values} for each
    setting that differs and a sweep can vary, the baseline's value first; and the names
    of the differing settings no axis varies (a model path, an interpreter...)."""
    axes: dict[str, list[str]] = {}
    fixed: list[str] = []
    for name in differing_settings([base, *configs]):
        if name not in _AXES:
            fixed.append(name)
            continue
        values: list[str] = []
        for config in (base, *configs):
            text = axis_text(name, getattr(config, name))
            if text not in values:
                values.append(text)
        axes[_AXES[name]] = values
    return axes, fixed
