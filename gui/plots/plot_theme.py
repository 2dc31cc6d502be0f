"""follow_palette: a live plot in the desktop's colours, light or dark, and kept so.

The plot classes draw light by default, because the review images render the same classes
on white; a view calls follow_palette() on each plot it shows. The plot then takes its
background, axes, grid and legend from the application palette, and its labels and lines
keep their hue but get the lightness they need to stay readable on that background, now
and after every palette change and every item a view adds.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QColor, QPalette, QPen

from ..widgets.palette import GRAPHIC_CONTRAST, keep_colours, mix, readable

AXIS_SIDES = ("left", "bottom", "right", "top")
NEUTRAL_SATURATION = 0.15


def follow_palette(plot: pg.PlotWidget) -> None:
    """Colour `plot` from the application palette, now and whenever it changes."""
    if getattr(plot, "_palette_follower", None) is None:
        plot._palette_follower = _PlotTheme(plot)  # type: ignore[attr-defined]


def plot_colors(plot: pg.PlotWidget) -> tuple[QColor, QColor]:
    """(background, ink) the plot is drawn in."""
    palette = plot.palette()
    return palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)


class _PlotTheme(QObject):
    def __init__(self, plot: pg.PlotWidget) -> None:
        super().__init__(plot)
        self._plot = plot
        self._recolour_pending = False
        # pyqtgraph tells its listeners when an item is added to or removed from the view box
        # (it keeps them by weak reference; the plot owns this object).
        plot.getPlotItem().getViewBox().childGroup.itemsChangedListeners.append(self)
        keep_colours(plot, self.apply)
        self.apply()

    def itemsChanged(self) -> None:  # noqa: N802 (pyqtgraph's name)
        # After the view's whole update: a band's label is made after the band is added.
        if not self._recolour_pending:
            self._recolour_pending = True
            QTimer.singleShot(0, self, self._recolour_items)

    def apply(self) -> None:
        back, ink = plot_colors(self._plot)
        self._plot.setBackground(back)
        item = self._plot.getPlotItem()
        axis_pen = readable(mix(ink, back, 0.6), back, GRAPHIC_CONTRAST)  # lines and the grid
        for side in AXIS_SIDES:
            if side in item.axes:
                axis = item.getAxis(side)
                axis.setPen(axis_pen)
                axis.setTextPen(ink)  # after setPen: both set the label's colour
        legend = item.legend
        if legend is not None:
            legend.setLabelTextColor(ink)
            for _sample, label in legend.items:
                label.setText(label.text)  # a label takes its new colour when its text is set
        self._recolour_items()

    def _recolour_items(self) -> None:
        """Labels and lines in their authored hue, readable on the background."""
        self._recolour_pending = False
        back, ink = plot_colors(self._plot)
        for item in self._plot.getPlotItem().getViewBox().allChildren():
            if isinstance(item, pg.TextItem):
                authored = _authored(item, "_authored_color", lambda i: QColor(i.color))
                # Grey or black text is ink: the palette's. A coloured label keeps its hue.
                color = ink if authored.hslSaturationF() < NEUTRAL_SATURATION else readable(authored, back)
                if color != item.color:
                    item.setColor(color)
            elif isinstance(item, pg.ScatterPlotItem):  # dots: marks, 3:1 like lines
                authored_brush = _authored(item, "_authored_brush", lambda i: QColor(i.opts["brush"].color()))
                dot = readable(authored_brush, back, GRAPHIC_CONTRAST)
                if item.opts["brush"].color() != dot:
                    item.setBrush(pg.mkBrush(dot))
            elif isinstance(item, pg.ErrorBarItem):
                authored = _authored(item, "_authored_pen", lambda i: QPen(pg.mkPen(i.opts["pen"])))
                pen = QPen(authored)
                pen.setColor(readable(authored.color(), back, GRAPHIC_CONTRAST))
                if pg.mkPen(item.opts["pen"]).color() != pen.color():
                    item.setData(pen=pen)
            elif isinstance(item, (pg.PlotDataItem, pg.InfiniteLine)):
                current = item.opts["pen"] if isinstance(item, pg.PlotDataItem) else item.pen
                authored = _authored(item, "_authored_pen", lambda _i, pen=current: QPen(pg.mkPen(pen)))
                if authored.style() == Qt.PenStyle.NoPen:
                    continue
                pen = QPen(authored)
                pen.setColor(readable(authored.color(), back, GRAPHIC_CONTRAST))
                if pg.mkPen(current).color() != pen.color():
                    item.setPen(pen)


def _authored(item, name: str, read):
    """What the view gave the item, remembered the first time it is themed: recolouring
    always starts from it, so light, dark and light again end where they began."""
    value = getattr(item, name, None)
    if value is None:
        value = read(item)
        setattr(item, name, value)
    return value
