"""PhaseBands: a plot's phases as translucent bands, each named inside its own band.

A name is shown only where it fits between its band's edges at the plot's present size and
range, and is placed again whenever either changes: a label pinned to a band's edge spills
onto the neighbouring band as soon as the band is narrower than its name.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtGui import QColor

from tflaunch.core.phases import colour, label

BAND_ALPHA = 45


class PhaseBands:
    def __init__(self, plot: pg.PlotItem) -> None:
        self._plot = plot
        self._bands: dict[str, pg.LinearRegionItem] = {}
        self.labels: dict[str, pg.TextItem] = {}
        # Emitted on every change of range or size: the one moment a label's fit changes.
        plot.getViewBox().sigTransformChanged.connect(lambda _vb: self.place_labels())

    @property
    def names(self) -> list[str]:
        return list(self._bands)

    def extent(self, name: str) -> tuple[float, float]:
        start, end = self._bands[name].getRegion()
        return float(start), float(end)

    def show(self, spans: dict[str, tuple[float, float]]) -> None:
        """Bands for {phase: (start s, duration s)}; a band shown already is moved, not remade
        (a live run's growing phase changes ten times a second)."""
        for name in [n for n in self._bands if n not in spans]:
            self._plot.removeItem(self._bands.pop(name))
            self._plot.removeItem(self.labels.pop(name))
        for name, (start, duration) in spans.items():
            band = self._bands.get(name)
            if band is None:
                band = self._add(name)
            band.setRegion((start, start + duration))
        self.place_labels()

    def _add(self, name: str) -> pg.LinearRegionItem:
        color = QColor(colour(name))
        color.setAlpha(BAND_ALPHA)
        band = pg.LinearRegionItem(movable=False, brush=color, pen=pg.mkPen(None))
        band.setZValue(-10)
        text = pg.TextItem(label(name), color=QColor(colour(name)).darker(140), anchor=(0, 0))
        text.setZValue(-5)
        self._plot.addItem(band)
        self._plot.addItem(text, ignoreBounds=True)
        self._bands[name], self.labels[name] = band, text
        return band

    def place_labels(self) -> None:
        """Each name at the top left of the visible part of its band, or hidden where it
        does not fit there."""
        view = self._plot.getViewBox()
        (x0, x1), (_y0, y1) = view.viewRange()
        pixel = view.viewPixelSize()[0] if view.width() > 0 else 0.0
        for name, text in self.labels.items():
            start, end = self.extent(name)
            left, right = max(start, x0), min(end, x1)
            # The text's box includes the document's margin: that is the padding from the edges.
            room = (right - left) / pixel if math.isfinite(pixel) and pixel > 0 else 0.0
            fits = room >= text.textItem.boundingRect().width()
            text.setVisible(fits)
            if fits:
                text.setPos(left, y1)
                text.updateTransform()
