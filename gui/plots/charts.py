"""Chart drawing shared by the live views and the review images, so both look the same."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg

from tflaunch.core.report.compare import short_row_label
from tflaunch.core.sweep.plan import objective_words
from tflaunch.core.units import MIB

# One colour per run (Tableau 10, print-safe), distinct from the phase colours' role.
RUN_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")


def run_color(index: int) -> str:
    return RUN_COLORS[index % len(RUN_COLORS)]


def row_heights(values: dict[str, float | None], rows: Sequence[str]) -> list[float]:
    """Seconds per chart group (the phases, other, time to ready); a phase a run did not
    reach is no bar (0)."""
    return [values.get(row) or 0.0 for row in rows]


def groups_of(runs: list[dict[str, float | None]]) -> tuple[str, ...]:
    """The chart's groups: every row any run has, in the runs' order (bar_values' keys)."""
    rows: list[str] = []
    for values in runs:
        rows += [row for row in values if row not in rows]
    return tuple(rows)


def setup_grouped_bars(plot: pg.PlotItem, rows: Sequence[str] = ()) -> None:
    plot.getAxis("left").setLabel("Duration (s)")
    plot.getAxis("left").enableAutoSIPrefix(False)
    plot.getAxis("bottom").setTicks([[(i, short_row_label(r)) for i, r in enumerate(rows)]])
    plot.showGrid(y=True, alpha=0.2)


def draw_grouped_bars(plot: pg.PlotItem, runs: list[dict[str, float | None]],
                      ranges: list[dict[str, tuple[float, float]]] | None = None) -> None:
    """One group per phase (then other and time to ready), one bar per run or side; with
    `ranges`, a side's runs' range (min to max) as a whisker on its bar."""
    for item in [i for i in plot.items if isinstance(i, (pg.BarGraphItem, pg.ErrorBarItem))]:
        plot.removeItem(item)
    rows = groups_of(runs)
    plot.getAxis("bottom").setTicks([[(i, short_row_label(r)) for i, r in enumerate(rows)]])
    width = 0.8 / max(len(runs), 1)
    for i, spans in enumerate(runs):
        x = np.arange(len(rows)) - 0.4 + width * (i + 0.5)
        heights = row_heights(spans, rows)
        plot.addItem(pg.BarGraphItem(x=x, height=heights, width=width * 0.9, brush=run_color(i),
                                     pen=pg.mkPen(None)))
        spread = (ranges[i] if ranges and i < len(ranges) else {})
        whiskers = [(x[k], heights[k], *spread[row]) for k, row in enumerate(rows) if row in spread]
        if whiskers:
            xs, ys, lows, highs = (np.array(v, dtype=float) for v in zip(*whiskers, strict=True))
            plot.addItem(pg.ErrorBarItem(x=xs, y=ys, top=highs - ys, bottom=ys - lows, beam=width * 0.4,
                                         pen=pg.mkPen(WHISKER_COLOR, width=1.5)))


WHISKER_COLOR = "#202124"  # a side's range over its bars: ink, on every run colour


def setup_memory_overlay(plot: pg.PlotItem) -> None:
    for side, text in (("bottom", "Time since launch (s)"), ("left", "Memory (MiB)")):
        plot.getAxis(side).enableAutoSIPrefix(False)
        plot.getAxis(side).setLabel(text)
    plot.showGrid(x=True, y=True, alpha=0.2)


def draw_memory_overlay(plot: pg.PlotItem, runs: list[list[tuple[float, int]]],
                        colors: list[int] | None = None) -> None:
    """Each run's memory curve, in its own colour or, with `colors`, its side's."""
    plot.clear()
    for i, samples in enumerate(runs):
        if samples:
            t, rss = zip(*samples, strict=False)
            plot.plot(t, np.array(rss) / MIB, pen=pg.mkPen(run_color(colors[i] if colors else i), width=2))


STRIP_COLOR, STOPPED_COLOR, MEDIAN_COLOR = "#0b57d0", "#9e9e9e", "#b3261e"


def draw_strips(plot: pg.PlotItem, distributions: list[tuple[str, list[float], bool]], objective: str,
                numbers: list[str] | None = None) -> None:
    """Every measured trial as a dot, the median as a bar: spread in plain sight. Each strip
    is named on the axis by `numbers` (the "#" of its row in the table beside it), by
    default 1, 2, ... in order."""
    plot.clear()
    scale, unit = (1 / MIB, "MiB") if objective == "peak" else (1.0, "s")
    if objective != "peak" and max((max(v) for _, v, _ in distributions if v), default=1.0) < 1.0:
        scale, unit = 1000.0, "ms"  # "440" ms, not "0.440" s whose digits the axis cut off
    names = numbers or [str(i + 1) for i in range(len(distributions))]
    plot.getAxis("left").enableAutoSIPrefix(False)
    plot.getAxis("left").setLabel(f"{objective_words(objective).capitalize()} ({unit})")
    plot.getAxis("bottom").setLabel("Setting (# in the table)")
    plot.getAxis("bottom").setTicks([[(i + 1, f"#{name}") for i, name in enumerate(names)]])
    plot.showGrid(y=True, alpha=0.2)
    jitter = np.random.default_rng(0)  # fixed: the same results always look the same
    for i, (_name, values, stopped) in enumerate(distributions):
        if not values:
            continue
        ys = np.array(values) * scale
        xs = i + 1 + jitter.uniform(-0.15, 0.15, len(ys))
        plot.addItem(pg.ScatterPlotItem(x=xs, y=ys, size=7, brush=pg.mkBrush(STOPPED_COLOR if stopped else STRIP_COLOR),
                                        pen=None))
        median = float(np.median(ys))
        plot.plot([i + 0.7, i + 1.3], [median, median], pen=pg.mkPen(MEDIAN_COLOR, width=2))
    plot.setXRange(0.4, len(distributions) + 0.6, padding=0)
