"""Waterfall: the phases as horizontal bars on one time axis, so the big ones stand out.

Live, the running phase is a bar that grows with the clock, its elapsed time (and, in steady
state, the calls done so far) written after it; the axis grows in steps as the memory
plot's does. A finished run fits its bars with room for their labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from tflaunch.core.phases import OTHER, colour, phase_rows, row_label, step_unit, timeline_rows
from tflaunch.core.run.anatomy import part_label, segments, short_label
from tflaunch.core.run.status import PhaseState
from tflaunch.core.units import format_duration

from .memory_plot import LIVE_MIN_S, nice_ceiling

if TYPE_CHECKING:
    from tflaunch.core.run.record import RunRecord

LABEL_ROOM = 1.25  # the axis runs this far past the last bar: its label is written there
# A label's extra words (a live progress note, the anatomy's largest part) are left out where
# they would stretch the axis this much or more: the bars keep their room.
STRETCH_LIMIT = 1.5


def live_spans(record: RunRecord, now: float) -> dict[str, tuple[float, float]]:
    """{phase: (start s, duration s)} since launch: the finished phases, and the running
    one from its start to `now` (wall clock)."""
    spans = record.offsets()
    for name, phase in record.phases.items():
        if phase.state is PhaseState.RUNNING and phase.started is not None and name not in spans:
            start = max(0.0, phase.started - record.launched_at)
            spans[name] = (start, max(0.0, now - record.launched_at - start))
    return spans


def progress_note(record: RunRecord) -> dict[str, str]:
    """"37/100 calls" (or steps, where the program trains) for a running phase that reports how far it is."""
    unit = step_unit(record.phases) + "s"
    return {name: f"{p.progress[0]}/{p.progress[1]} {unit}" for name, p in record.phases.items()
            if p.state is PhaseState.RUNNING and p.progress is not None}


class Waterfall(pg.PlotWidget):
    """One row per phase; a script run has a single row of its own."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w", enableMenu=False)  # no menus: built eagerly, never shown
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
        self._order: tuple[str, ...] = ()
        self._set_rows(("spawn",))  # before any run: the phase every run starts with
        self._bars = pg.BarGraphItem(x0=[0], y=[0], width=[1], height=0.6, pen=pg.mkPen(None))
        self._bars.hide()
        plot.addItem(self._bars)
        # An anatomy run's phase in its parts: a thin bar under the phase's, split end to end.
        self._parts = pg.BarGraphItem(x0=[0], y=[0], width=[1], height=0.22, pen=pg.mkPen(None))
        self._parts.hide()
        plot.addItem(self._parts)
        self.part_names: list[str] = []  # the parts drawn, in order
        # The label naming the anatomy's largest part: (label, without the name, with it).
        self._part_label: tuple[pg.TextItem, str, str] | None = None
        self.bar_names: list[str] = []  # the rows drawn, in the bars' order
        self.labels: list[pg.TextItem] = []  # reused from draw to draw; the unused are hidden
        self._live_x = LIVE_MIN_S
        self._drawn_end: float | None = None  # a finished run's last bar end, for a refit on resize
        self.setMinimumHeight(190)
        # A label's room is in pixels: at another width the axis must run further (or less).
        plot.getViewBox().sigResized.connect(self._refit)

    def show_record(self, record: RunRecord | None) -> None:
        """A finished run; None clears the chart for a new one."""
        self._live_x = LIVE_MIN_S
        self.show_spans(record.offsets() if record else {}, gaps=record.gaps() if record else (),
                        rows=phase_rows([record]) if record else ())
        self._show_anatomy(record)

    def _show_anatomy(self, record: RunRecord | None) -> None:
        """The anatomy's parts under their phase's bar, and the largest named after its duration."""
        anatomy = record.anatomy if record is not None else None
        spans = record.offsets() if record is not None else {}
        self.part_names = []
        self._part_label = None
        phase = anatomy.phase if anatomy is not None and anatomy.error is None else None
        if anatomy is None or phase is None or phase not in spans or phase not in self._order:
            self._parts.hide()
            return
        start, _ = spans[phase]
        x0, widths, brushes = [], [], []
        for label, seconds, part_colour in segments(anatomy):
            x0.append(start)
            widths.append(max(seconds, 1e-5))
            brushes.append(pg.mkBrush(part_colour))
            self.part_names.append(label)
            start += seconds
        row = self._order.index(phase) + 0.42
        self._parts.setOpts(x0=x0, y=[row] * len(x0), width=widths, brushes=brushes)
        self._parts.show()
        biggest = max(anatomy.parts, key=lambda p: p.seconds, default=None)
        for label in self.labels:
            if biggest and label.isVisible() and abs(label.pos().y() - self._order.index(phase)) < 0.01:
                short = label.toPlainText()
                self._part_label = (label, short, f"{short} · {short_label(part_label(biggest.key))} "
                                                  f"{format_duration(biggest.seconds)}")
        self._fit_part_name()

    def _fit_part_name(self) -> None:
        """The axis with the largest part named after its phase's duration where that costs the
        bars little room; without the name where it would stretch the axis by half again or more
        (a 280 px chart at 1024x700 ran to 35 s for a 7 s run, its bars in the first fifth). The
        parts' own bars and the phase table name them either way."""
        if self._part_label is None or self._drawn_end is None:
            return
        label, short, longer = self._part_label
        label.setText(short)
        plain = max(self._drawn_end * LABEL_ROOM, self._labels_end())
        label.setText(longer)
        named = max(plain, self._label_needs(label))
        if named > STRETCH_LIMIT * plain:
            label.setText(short)
            named = plain
        self.getPlotItem().setXRange(0, named, padding=0)

    def show_live(self, record: RunRecord, now: float) -> None:
        """A running run at wall-clock time `now`: the running phase's bar grows."""
        spans = live_spans(record, now)
        self._parts.hide()
        self._drawn_end = None  # the live axis grows in steps of its own
        rows, notes = phase_rows([record]), progress_note(record)
        end = self._draw(spans, (), notes, rows)
        if notes and self._labels_end() > STRETCH_LIMIT * end * LABEL_ROOM:
            # "20/120 steps" after the running bar's label stretched a 280 px chart's axis to
            # 28 s at 5 s into the run; the phase table's row says how far it is.
            end = self._draw(spans, (), {}, rows)
        live_x = max(self._live_x, nice_ceiling(max(end * LABEL_ROOM, self._labels_end())))
        if live_x != self._live_x or not spans:
            self._live_x = live_x
            self.getPlotItem().setXRange(0, live_x, padding=0)

    def show_spans(self, spans: dict[str, tuple[float, float]], gaps: Sequence[tuple[float, float]] = (),
                   rows: Sequence[str] = ()) -> None:
        """Bars for {phase: (start s, duration s)}, each with its duration written after it;
        `gaps`, the time between phases, on an "Other" row with their total; `rows`, the
        run's (phases.phase_rows), else the spans' own."""
        end = self._draw(spans, gaps, {}, rows)
        self._drawn_end = end if spans else None
        # Room on the right for the labels of the bars that end last.
        self.getPlotItem().setXRange(0, max(end * LABEL_ROOM, self._labels_end()) if spans else 1, padding=0)

    def _refit(self) -> None:
        """The axis again after a resize: the labels fit at the new width."""
        if self._part_label is not None:
            self._fit_part_name()
        elif self._drawn_end is not None:
            self.getPlotItem().setXRange(0, max(self._drawn_end * LABEL_ROOM, self._labels_end()), padding=0)

    def _label_needs(self, label: pg.TextItem) -> float:
        """The shortest axis (s) on which this label ends inside the plot; infinite for one
        nearly as wide as the plot itself."""
        width = self.getPlotItem().getViewBox().width()
        share = label.boundingRect().width() / width if width > 0 else 1.0
        return label.pos().x() / (1 - share) if share < 0.9 else float("inf")

    def _labels_end(self) -> float:
        """The shortest axis (s) on which every label ends inside the plot at its present
        width: a label of w pixels at x fits an axis of X seconds over W pixels when
        x + w * X / W <= X; one nearly as wide as the plot is left to be cut. 0 while the plot
        has no width (an image not yet laid out)."""
        needs = [self._label_needs(label) for label in self.labels if label.isVisible()]
        return max((n for n in needs if n != float("inf")), default=0.0)

    def _draw(self, spans: dict[str, tuple[float, float]], gaps: Sequence[tuple[float, float]],
              notes: dict[str, str], rows: Sequence[str] = ()) -> float:
        """The bars and their labels, reusing the items already there; the last bar's end.
        The run's rows; "other" once there is time between its phases to show."""
        self._part_label = None  # labels are reused: the anatomy names its part after this
        names = [*rows, *(n for n in spans if n not in rows)]
        order = tuple(n for n in timeline_rows(names) if n != OTHER or gaps)
        self._set_rows(order)
        bars = [(order.index(name), start, duration, name) for name, (start, duration) in spans.items()]
        bars += [(order.index(OTHER), start, duration, OTHER) for start, duration in gaps]
        self.bar_names = [r[3] for r in bars]
        self._bars.setVisible(bool(bars))
        if bars:
            self._bars.setOpts(x0=[r[1] for r in bars], y=[r[0] for r in bars],
                               width=[max(r[2], 1e-4) for r in bars],
                               brushes=[pg.mkBrush(colour(r[3])) for r in bars])
        texts = [(" · ".join(filter(None, (format_duration(duration), notes.get(name)))), start + duration, index)
                 for index, start, duration, name in bars if name != OTHER]
        if gaps:
            last = max(start + duration for start, duration in gaps)
            texts.append((f"{format_duration(sum(d for _, d in gaps))} in all", last, order.index(OTHER)))
        self._set_labels(texts)
        return max((start + duration for _, start, duration, _ in bars), default=0.0)

    def _set_labels(self, texts: list[tuple[str, float, int]]) -> None:
        plot = self.getPlotItem()
        while len(self.labels) < len(texts):
            label = pg.TextItem(color="#202124", anchor=(0, 0.5))
            plot.addItem(label, ignoreBounds=True)
            self.labels.append(label)
        for label, (text, x, row) in zip(self.labels, texts, strict=False):
            if label.toPlainText() != text:
                label.setText(text)
            label.setPos(x, row)
            label.show()
        for label in self.labels[len(texts):]:
            label.hide()

    def _set_rows(self, names: Sequence[str]) -> None:
        order = tuple(names)
        if order == self._order:  # new ticks redraw the axis: only when the rows change
            return
        self._order = order
        self._left.setTicks([[(i, row_label(name)) for i, name in enumerate(order)]])
        self.getPlotItem().setYRange(-0.6, len(order) - 0.4, padding=0)
