"""Waterfall: the phases as horizontal bars on one time axis, so the big ones stand out."""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from tflaunch.core.phases import LABELS, OTHER, TIMELINE_ROWS
from tflaunch.core.run.record import RunRecord
from tflaunch.core.units import format_duration

from .palette import PHASE_COLORS

ROWS = TIMELINE_ROWS


class Waterfall(pg.PlotWidget):
    """One row per phase; a script run has a single row of its own."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w")
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        plot = self.getPlotItem()
        bottom = plot.getAxis("bottom")
        bottom.enableAutoSIPrefix(False)
        bottom.setLabel("Time since launch (s)")
        plot.showGrid(x=True, y=False, alpha=0.2)
        self._left = plot.getAxis("left")
        self._left.setWidth(110)
        plot.invertY(True)
        self._set_rows(ROWS)
        self._bars: pg.BarGraphItem | None = None
        self._labels: list[pg.TextItem] = []
        self.setMinimumHeight(190)

    def show_record(self, record: RunRecord | None) -> None:
        self.show_spans(record.offsets() if record else {}, script=record is not None and record.is_script,
                        gaps=record.gaps() if record else ())

    def show_spans(self, spans: dict[str, tuple[float, float]], script: bool = False,
                   gaps: Sequence[tuple[float, float]] = ()) -> None:
        """Bars for {phase: (start s, duration s)}, each with its duration written after it;
        `gaps`, the time between phases, on an "Other" row with their total."""
        plot = self.getPlotItem()
        if self._bars is not None:
            plot.removeItem(self._bars)
            self._bars = None
        for label in self._labels:
            plot.removeItem(label)
        self._labels = []
        order = ("script",) if script else ROWS
        self._set_rows(order)
        if not spans:
            plot.setXRange(0, 1, padding=0)
            return
        rows = [(order.index(name), start, duration, name) for name, (start, duration) in spans.items()]
        rows += [(order.index(OTHER), start, duration, OTHER) for start, duration in gaps if not script]
        self._bars = pg.BarGraphItem(
            x0=[r[1] for r in rows], y=[r[0] for r in rows], width=[max(r[2], 1e-4) for r in rows],
            height=0.6, brushes=[pg.mkBrush(PHASE_COLORS[r[3]]) for r in rows], pens=[pg.mkPen(None)] * len(rows),
        )
        plot.addItem(self._bars)
        end = max(start + duration for _, start, duration, _ in rows)
        for index, start, duration, name in rows:
            if name == OTHER:
                continue
            self._label(format_duration(duration), start + duration, index)
        if gaps and not script:
            last = max(start + duration for start, duration in gaps)
            self._label(f"{format_duration(sum(d for _, d in gaps))} in all", last, order.index(OTHER))
        # Room on the right for the labels of the bars that end last.
        plot.setXRange(0, end * 1.25, padding=0)

    def _label(self, text: str, x: float, row: int) -> None:
        label = pg.TextItem(text, color="#202124", anchor=(0, 0.5))
        label.setPos(x, row)
        self.getPlotItem().addItem(label)
        self._labels.append(label)

    def _set_rows(self, names) -> None:
        self._left.setTicks([[(i, LABELS.get(name, "Other")) for i, name in enumerate(names)]])
        self.getPlotItem().setYRange(-0.6, len(names) - 0.4, padding=0)
