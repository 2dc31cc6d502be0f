"""MemoryPlot: the child's RSS over time, with the phases as bands and the peak marked."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from tflaunch.core.phases import LABELS
from tflaunch.core.run.record import RunRecord
from tflaunch.core.units import MIB, format_bytes

from .palette import PEAK_COLOR, PHASE_COLORS, RSS_COLOR

INITIAL_CAPACITY = 4096
BAND_ALPHA = 45
# A band narrower than this share of the visible time gets no label: names of short
# phases would pile up on each other (the waterfall above shows them instead).
LABEL_MIN_SHARE = 0.09


def _nice_ceiling(value: float) -> float:
    """The next of 1, 2, 5, 10, 20, 50... at or above value."""
    step = 10 ** np.floor(np.log10(max(value, 1e-9)))
    for factor in (1, 2, 5, 10):
        if factor * step >= value:
            return float(factor * step)
    return float(10 * step)


class MemoryPlot(pg.PlotWidget):
    """Live curve kept cheap: a preallocated buffer, one setData per sample, peak downsampling."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w")
        self.setMenuEnabled(False)
        plot = self.getPlotItem()
        for side, text in (("bottom", "Time since launch (s)"), ("left", "Memory (MiB)")):
            axis = plot.getAxis(side)
            axis.enableAutoSIPrefix(False)
            axis.setLabel(text)
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.setClipToView(True)
        plot.setDownsampling(mode="peak")
        plot.addLegend(offset=(-10, -10), labelTextColor="#202124")  # bottom right: the curve rises away from it
        self._curve = plot.plot(pen=pg.mkPen(RSS_COLOR, width=2), name="RSS of process tree")
        # The peak is the run's high-water mark (the probe's VmHWM or the sampled tree,
        # whichever is higher), the same figure the summary shows: samples can miss a spike.
        self._peak = pg.InfiniteLine(angle=0, movable=False,
                                     pen=pg.mkPen(PEAK_COLOR, width=1, style=Qt.PenStyle.DashLine))
        self._peak_label = pg.TextItem(color=PEAK_COLOR, anchor=(0.5, 0))
        for item in (self._peak, self._peak_label):
            item.hide()
            plot.addItem(item)
        self._bands: list[pg.LinearRegionItem] = []
        self._t = np.empty(INITIAL_CAPACITY)
        self._mib = np.empty(INITIAL_CAPACITY)
        self._n = 0
        self.samples_shown = 0  # samples that reached the curve (the responsiveness benchmark reads it)
        self.setMinimumHeight(200)
        self.clear_run()

    @property
    def sample_times(self) -> np.ndarray:
        return self._t[: self._n]

    @property
    def band_names(self) -> list[str]:
        return [b.phase for b in self._bands]

    def clear_run(self) -> None:
        self._n = 0
        self._curve.setData([], [])
        self._peak.hide()
        self._peak_label.hide()
        self._set_bands({}, 1.0)
        self._x_max, self._y_max = 5.0, 1000.0
        self.getPlotItem().setRange(xRange=(0, self._x_max), yRange=(0, self._y_max), padding=0)

    def add_sample(self, t: float, rss: int) -> None:
        """One live sample: appended to the buffer and drawn at once."""
        self._append(t, rss)
        self._curve.setData(self._t[: self._n], self._mib[: self._n])
        self.samples_shown += 1

    def _append(self, t: float, rss: int) -> None:
        if self._n == len(self._t):
            self._t = np.resize(self._t, 2 * self._n)
            self._mib = np.resize(self._mib, 2 * self._n)
        self._t[self._n], self._mib[self._n] = t, rss / MIB
        self._n += 1
        self._grow_range(t, rss / MIB)

    def _grow_range(self, t: float, mib: float) -> None:
        """Widen the live axes in 1-2-5 steps: a range that changed with every sample
        would make pyqtgraph redraw both axes 15 times a second, the main cost of a frame."""
        if t > self._x_max or mib > self._y_max:
            self._x_max = max(self._x_max, _nice_ceiling(t * 1.2))
            self._y_max = max(self._y_max, _nice_ceiling(mib * 1.2))
            self.getPlotItem().setRange(xRange=(0, self._x_max), yRange=(0, self._y_max), padding=0)

    def show_record(self, record: RunRecord) -> None:
        """Redraw everything from a record: a finished run, or one chosen from the list."""
        peak = record.peak_rss if record.finished_at is not None else None
        self.show_series(record.samples, record.offsets(), peak)

    def show_series(self, samples: list[tuple[float, int]], spans: dict[str, tuple[float, float]],
                    peak: int | None) -> None:
        """A whole run at once: its samples, its phases as bands, and its peak if known."""
        self._n = 0
        for t, rss in samples:
            self._append(t, rss)
        self._curve.setData(self._t[: self._n], self._mib[: self._n])
        if self._n:  # a finished run fits its data exactly
            self.getPlotItem().setXRange(0, float(self._t[self._n - 1]), padding=0.02)
        self._show_spans(spans)
        if peak:
            mib = peak / MIB
            self._peak.setValue(mib)
            # Under the line half-way along: start-up memory mostly rises, so the curve
            # reaches the peak late and leaves the middle of the line clear.
            end = max([s + d for s, d in spans.values()] + [float(self._t[self._n - 1]) if self._n else 0.0])
            self._peak_label.setText(f"peak {format_bytes(peak)}")
            self._peak_label.setPos(end / 2, mib)
            self._peak.show()
            self._peak_label.show()
            self.getPlotItem().setYRange(0, mib * 1.15, padding=0)

    def show_phases(self, record: RunRecord) -> None:
        self._show_spans(record.offsets())

    def _show_spans(self, spans: dict[str, tuple[float, float]]) -> None:
        end = max([s + d for s, d in spans.values()] + [float(self._t[self._n - 1]) if self._n else 0.0])
        end = max(end, 1e-3)
        if not self._n:  # a run that died before the first sample: fit the axis to its phases
            self.getPlotItem().setXRange(0, end, padding=0.02)
        self._set_bands(spans, end)

    def _set_bands(self, spans: dict[str, tuple[float, float]], visible: float) -> None:
        plot = self.getPlotItem()
        for item in self._bands:
            plot.removeItem(item)
        self._bands = []
        for name, (start, duration) in spans.items():
            color = QColor(PHASE_COLORS[name])
            color.setAlpha(BAND_ALPHA)
            band = pg.LinearRegionItem((start, start + duration), movable=False, brush=color,
                                       pen=pg.mkPen(None))
            band.phase = name
            band.setZValue(-10)
            plot.addItem(band)
            self._bands.append(band)
            if duration / visible >= LABEL_MIN_SHARE:
                # A child of the band's edge: it goes when the band is removed.
                pg.InfLineLabel(band.lines[0], LABELS[name], position=0.95, anchor=(-0.05, 0),
                                color=QColor(PHASE_COLORS[name]).darker(140))
