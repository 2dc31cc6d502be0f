"""MemoryPlot: the child's memory over time, with the phases as bands and the peaks marked.

RSS of the process tree and each GPU's memory held by the tree (NVML) share one axis, in
MiB (GiB once it passes 10 GiB). Live, the axes grow in steps to fit what has arrived,
from the first sample on; a finished run fits its data exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from tflaunch.core.units import MIB, format_bytes

from ..widgets.palette import GPU_COLORS, PEAK_COLOR, RSS_COLOR
from .phase_bands import PhaseBands

if TYPE_CHECKING:
    from tflaunch.core.run.record import RunRecord

INITIAL_CAPACITY = 4096
HEADROOM = 1.15  # a live axis ends this far beyond the data, then the next nice value
LIVE_MIN_S, LIVE_MIN_MIB = 1.0, 100.0  # the smallest live ranges: a first sample is not a whole axis
GIB_AXIS_FROM_MIB = 10 * 1024
_STEPS = (1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0)
LEGEND_VEIL_ALPHA = 215
LEGEND_RSS_ONLY, LEGEND_WITH_GPUS = (-10, -10), (10, 26)  # pixels from the corner; 26: under band labels

LiveSample = tuple[float, int, dict[int, int]]  # s since launch, RSS bytes, {gpu index: bytes}


def nice_ceiling(value: float) -> float:
    """The next of 1, 1.5, 2, 3, 5, 7.5, 10, 15... at or above value: the steps a live axis
    grows by, so it is redrawn a few times a run rather than with every sample."""
    scale = 10 ** np.floor(np.log10(max(value, 1e-9)))
    return float(next(step * scale for step in _STEPS if step * scale >= value * (1 - 1e-12)))


def gpu_name(index: int) -> str:
    return f"GPU {index} (process tree)"


class _Points:
    """A growing curve's points in preallocated buffers: one setData per batch, no lists."""

    def __init__(self) -> None:
        self._t = np.empty(INITIAL_CAPACITY)
        self._v = np.empty(INITIAL_CAPACITY)
        self.n = 0

    def append(self, t: float, value: float) -> None:
        if self.n == len(self._t):
            self._t = np.resize(self._t, 2 * self.n)
            self._v = np.resize(self._v, 2 * self.n)
        self._t[self.n], self._v[self.n] = t, value
        self.n += 1

    @property
    def times(self) -> np.ndarray:
        return self._t[: self.n]

    @property
    def values(self) -> np.ndarray:
        return self._v[: self.n]

    @property
    def peak(self) -> float:
        return float(self.values.max()) if self.n else 0.0


class _GpuCurve:
    """One GPU's memory: its curve and legend entry, and its peak once the run is over."""

    def __init__(self, plot: pg.PlotItem, index: int) -> None:
        color = GPU_COLORS[index % len(GPU_COLORS)]
        self.index = index
        self.points = _Points()
        self.curve = plot.plot(pen=pg.mkPen(color, width=2), name=gpu_name(index))
        self.peak = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine))
        self.peak.hide()
        plot.addItem(self.peak)

    def draw(self) -> None:
        self.curve.setData(self.points.times, self.points.values)

    def remove(self, plot: pg.PlotItem) -> None:
        plot.removeItem(self.curve)  # and its legend entry
        plot.removeItem(self.peak)


class MemoryPlot(pg.PlotWidget):
    """Live curves kept cheap: preallocated buffers, one setData per batch, peak downsampling."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w", enableMenu=False)  # no menus: built eagerly, never shown
        self.setMenuEnabled(False)
        plot = self.getPlotItem()
        for side, text in (("bottom", "Time since launch (s)"), ("left", "Memory (MiB)")):
            axis = plot.getAxis(side)
            axis.enableAutoSIPrefix(False)
            axis.setLabel(text)
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.setClipToView(True)
        plot.setDownsampling(mode="peak")
        self.legend = plot.addLegend(offset=LEGEND_RSS_ONLY, labelTextColor="#202124")
        self._curve = plot.plot(pen=pg.mkPen(RSS_COLOR, width=2), name="RSS of process tree")
        # The peak is the run's high-water mark (the probe's VmHWM or the sampled tree,
        # whichever is higher), the same figure the summary shows: samples can miss a spike.
        self._peak = pg.InfiniteLine(angle=0, movable=False,
                                     pen=pg.mkPen(PEAK_COLOR, width=1, style=Qt.PenStyle.DashLine))
        self._peak_label = pg.TextItem(color=PEAK_COLOR, anchor=(0.5, 0))
        for item in (self._peak, self._peak_label):
            item.hide()
            plot.addItem(item)
        self.bands = PhaseBands(plot)
        self._rss = _Points()
        self.gpus: dict[int, _GpuCurve] = {}
        self._gib = False
        self._x_max, self._y_max = LIVE_MIN_S, LIVE_MIN_MIB
        self.samples_shown = 0  # samples that reached the curve (the responsiveness benchmark reads it)
        self.setMinimumHeight(200)
        self.clear_run()

    @property
    def sample_times(self) -> np.ndarray:
        return self._rss.times

    @property
    def band_names(self) -> list[str]:
        return self.bands.names

    def clear_run(self) -> None:
        self._clear_curves()
        self.bands.show({})
        self._x_max, self._y_max = LIVE_MIN_S, LIVE_MIN_MIB
        self._set_range(self._x_max, self._y_max)

    def _clear_curves(self) -> None:
        self._rss = _Points()
        self._curve.setData([], [])
        for gpu in self.gpus.values():
            gpu.remove(self.getPlotItem())
        self.gpus = {}
        self._place_legend()
        self._peak.hide()
        self._peak_label.hide()

    # -- live ------------------------------------------------------------------------------
    def add_samples(self, batch: Sequence[LiveSample]) -> None:
        """Live samples, oldest first: appended, then each curve drawn once."""
        if not batch:
            return
        top = 0.0
        for t, rss, gpu in batch:
            self._rss.append(t, rss / MIB)
            top = max(top, rss / MIB)
            for index, used in gpu.items():
                self._gpu(index).points.append(t, used / MIB)
                top = max(top, used / MIB)
        self._draw_curves()
        self.samples_shown += len(batch)
        self._grow(batch[-1][0], top)

    def show_live_phases(self, spans: dict[str, tuple[float, float]]) -> None:
        """The phases so far, the running one up to now: {phase: (start s, duration s)}."""
        self.bands.show(spans)
        self._grow(max((start + duration for start, duration in spans.values()), default=0.0), 0.0)

    def _grow(self, t: float, mib: float) -> None:
        """Widen the live axes to the next nice value when the data reaches their end: a
        range that changed with every sample would make pyqtgraph redraw both axes 25 times
        a second, the main cost of a frame. Never narrower: all samples stay in view."""
        x, y = max(self._x_max, nice_ceiling(t * HEADROOM)), max(self._y_max, nice_ceiling(mib * HEADROOM))
        if (x, y) != (self._x_max, self._y_max):
            self._x_max, self._y_max = x, y
            self._set_range(x, y)

    def _gpu(self, index: int) -> _GpuCurve:
        if index not in self.gpus:
            self.gpus[index] = _GpuCurve(self.getPlotItem(), index)
            self._place_legend()
        return self.gpus[index]

    def _place_legend(self) -> None:
        """Bottom right for the RSS alone; with GPUs, whose curves jump to the top once
        devices start and whose legend grows, top left: below the band labels, over the
        import, when memory is still low. On a veil of the plot's own background, as a
        curve may still pass under it."""
        if self.gpus:
            veil = QColor(self.backgroundBrush().color())
            veil.setAlpha(LEGEND_VEIL_ALPHA)
            self.legend.setBrush(veil)
            self.legend.setOffset(LEGEND_WITH_GPUS)
        else:
            self.legend.setBrush(None)
            self.legend.setOffset(LEGEND_RSS_ONLY)

    def _draw_curves(self) -> None:
        self._curve.setData(self._rss.times, self._rss.values)
        for gpu in self.gpus.values():
            gpu.draw()

    def _set_range(self, x_max: float, y_max: float, x_padding: float = 0.0) -> None:
        self._set_unit(y_max)
        plot = self.getPlotItem()
        if x_padding:
            plot.setXRange(0, x_max, padding=x_padding)
            plot.setYRange(0, y_max, padding=0)
        else:  # live: both at once, one redraw
            plot.setRange(xRange=(0, x_max), yRange=(0, y_max), padding=0)

    def _set_unit(self, y_max: float) -> None:
        gib = y_max > GIB_AXIS_FROM_MIB
        if gib != self._gib:
            self._gib = gib
            axis = self.getPlotItem().getAxis("left")
            axis.setScale(1 / 1024 if gib else 1.0)  # the data stays in MiB; the ticks read GiB
            axis.setLabel("Memory (GiB)" if gib else "Memory (MiB)")

    # -- finished --------------------------------------------------------------------------
    def show_record(self, record: RunRecord) -> None:
        """Redraw everything from a record: a finished run, or one chosen from the list."""
        peak = record.peak_rss if record.finished_at is not None else None
        self.show_series(record.samples, record.offsets(), peak, record.gpu_samples, record.allocator_peaks)

    def show_series(self, samples: Sequence[tuple[float, int]], spans: dict[str, tuple[float, float]],
                    peak: int | None, gpu_samples: Sequence[tuple[float, dict[int, int]]] = (),
                    allocator: dict[int, int] | None = None) -> None:
        """A whole run at once: its samples (RSS, and per GPU where given), its phases as
        bands, its peaks if known, and TensorFlow's allocator peak per GPU if reported."""
        self._clear_curves()
        for t, rss in samples:
            self._rss.append(t, rss / MIB)
        for t, used in gpu_samples:
            for index, value in used.items():
                self._gpu(index).points.append(t, value / MIB)
        self._draw_curves()
        self.bands.show(spans)
        # The axis ends with the samples (a run is sampled to its exit), or with the phases
        # of a run that ended before its first sample.
        ends = [float(p.times[-1]) for p in (self._rss, *(g.points for g in self.gpus.values())) if p.n]
        end = max(ends or [start + duration for start, duration in spans.values()] or [1e-3])
        tops = [self._rss.peak, *(self._show_gpu_peak(g, (allocator or {}).get(g.index)) for g in self.gpus.values())]
        if peak:
            mib = peak / MIB
            tops.append(mib)
            self._peak.setValue(mib)
            # Under the line half-way along: start-up memory mostly rises, so the curve
            # reaches the peak late and leaves the middle of the line clear.
            self._peak_label.setText(f"peak {format_bytes(peak)}")
            self._peak_label.setPos(end / 2, mib)
            self._peak.show()
            self._peak_label.show()
        # A finished run fits its data exactly.
        self._set_range(end, max(tops) * HEADROOM if max(tops) > 0 else LIVE_MIN_MIB, x_padding=0.02)

    def _show_gpu_peak(self, gpu: _GpuCurve, allocator: int | None) -> float:
        """The GPU's peak as a dashed line in its colour, and in its legend entry with
        TensorFlow's allocator peak; the higher of the two in MiB."""
        peak = gpu.points.peak
        text = f"{gpu_name(gpu.index)} · peak {format_bytes(int(peak * MIB))}"
        if allocator:
            text += f" · TensorFlow allocator peak {format_bytes(allocator)}"
        label = self.legend.getLabel(gpu.curve)
        if label is not None:
            label.setText(text)
            self.legend.updateSize()
        gpu.peak.setValue(peak)
        gpu.peak.setVisible(peak > 0)
        return max(peak, (allocator or 0) / MIB)
