"""Review images: one composed picture of a run, a comparison or a sweep.

Drawn on a fixed 1600×900 canvas in a light theme of its own (not the app's palette),
never captured from the live window, so it is the same whatever the window's size. The
charts are the app's own plot classes in pyqtgraph's export mode, painted item by item
(plot_painting) onto our painter; the same painting code writes PNG (a QImage) and SVG
(a QSvgGenerator, where text stays text, then rewritten into page pixels by
svg_geometry so every renderer draws its lines as the PNG does). Fonts are sized in
pixels and both formats use 96 dpi, so no screen's DPI moves a label.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QTextOption
from PySide6.QtSvg import QSvgGenerator, QSvgRenderer

from tflaunch.core.report.review import Review, Series
from tflaunch.core.units import MIB

from .charts import (
    draw_grouped_bars,
    draw_memory_overlay,
    draw_strips,
    run_color,
    setup_grouped_bars,
    setup_memory_overlay,
)
from .memory_plot import MemoryPlot
from .plot_painting import paint_plot
from .svg_geometry import page_coordinates
from .waterfall import Waterfall

WIDTH, HEIGHT = 1600, 900
DPI = 96  # the CSS pixel: 1600 px is 423 mm in an SVG, as in a browser
DOTS_PER_METER = round(DPI / 0.0254)
MARGIN = 40
INK, MUTED, RULE, ACCENT, ZEBRA = "#202124", "#5f6368", "#dadce0", "#0b57d0", "#f5f7fa"


def _font(pixels: int, bold: bool = False) -> QFont:
    font = QFont("DejaVu Sans")
    font.setPixelSize(pixels)  # pixels, not points: the same size on every screen and DPI
    font.setBold(bold)
    return font


class _Canvas:
    """Painting helpers on a logical 1600×900 page."""

    def __init__(self, painter: QPainter) -> None:
        self.p = painter

    def text(self, rect: QRectF, text: str, size: int, bold: bool = False, color: str = INK,
             flags=Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) -> float:
        """Wrapped text in rect; returns the height it took."""
        self.p.setFont(_font(size, bold))
        self.p.setPen(QColor(color))
        option = QTextOption(flags)
        # Between words where it can, anywhere where it must: a long path stays in its column.
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        bounds = self.p.boundingRect(rect, text, option)
        self.p.drawText(rect, text, option)
        return min(bounds.height(), rect.height())

    def facts(self, rect: QRectF, facts: list[tuple[str, str]]) -> float:
        y = rect.top()
        for label, value in facts:
            if y > rect.bottom() - 18:
                break
            label_h = self.text(QRectF(rect.left(), y, 200, 60), label, 15, bold=True, color=MUTED)
            value_h = self.text(QRectF(rect.left() + 215, y, rect.width() - 215, rect.bottom() - y), value, 15)
            y += max(label_h, value_h) + 8
        return y - rect.top()

    def table(self, rect: QRectF, header: list[str], rows: list[list[str]], size: int = 14) -> None:
        """A table that fits rect: columns sized to their text, the widest shrunk and elided."""
        metrics = QFontMetricsF(_font(size, True))
        pad = 10
        widths = [max([metrics.horizontalAdvance(h)] + [metrics.horizontalAdvance(r[i]) for r in rows]) + 2 * pad
                  for i, h in enumerate(header)]
        excess = sum(widths) - rect.width()
        if excess > 0:  # shrink the widest column (the setting names) to fit, eliding its text
            widest = widths.index(max(widths))
            widths[widest] = max(80.0, widths[widest] - excess)
        row_h = size + 14
        self.p.fillRect(QRectF(rect.left(), rect.top(), sum(widths), row_h), QColor("#e8eaed"))
        for r, cells in enumerate([header, *rows]):
            y = rect.top() + r * row_h
            if y + row_h > rect.bottom():
                self.text(QRectF(rect.left(), y, rect.width(), row_h), f"… and {len(rows) - r + 1} more rows", size,
                          color=MUTED)
                break
            if r > 0 and r % 2 == 0:
                self.p.fillRect(QRectF(rect.left(), y, sum(widths), row_h), QColor(ZEBRA))
            x = rect.left()
            for i, cell in enumerate(cells):
                self.p.setFont(_font(size, bold=(r == 0)))
                self.p.setPen(QColor(INK if r else MUTED))
                shown = QFontMetricsF(self.p.font()).elidedText(cell, Qt.TextElideMode.ElideRight, widths[i] - 2 * pad)
                numeric = r > 0 and i > 0 and cell[:1].isdigit()
                side = Qt.AlignmentFlag.AlignRight if numeric else Qt.AlignmentFlag.AlignLeft
                align = side | Qt.AlignmentFlag.AlignVCenter
                self.p.drawText(QRectF(x + pad, y, widths[i] - 2 * pad, row_h), int(align), shown)
                x += widths[i]
        self.p.setPen(QPen(QColor(RULE), 1))
        rule_y = rect.top() + row_h
        self.p.drawLine(QPointF(rect.left(), rule_y), QPointF(rect.left() + sum(widths), rule_y))

    def plot(self, rect: QRectF, widget: pg.PlotWidget) -> None:
        """Paint a plot widget's PlotItem into rect in pyqtgraph's export mode."""
        item = widget.getPlotItem()
        _light_theme(item)
        item.setGeometry(QRectF(0, 0, rect.width(), rect.height()))
        item.layout.activate()
        widget.scene().prepareForPaint()
        exporter = ImageExporter(item)
        exporter.setExportMode(True, {"antialias": True, "background": QColor("white"), "painter": self.p,
                                      "resolutionScale": 1.0})
        try:
            paint_plot(self.p, item, rect)
        finally:
            exporter.setExportMode(False)


def _light_theme(item: pg.PlotItem) -> None:
    """The review's own colours and pixel-sized fonts on a plot, whatever the app's theme,
    palette or screen DPI gave it: the picture is the same on every machine."""
    item.getViewBox().setBackgroundColor(QColor("white"))
    for side in ("left", "bottom", "right", "top"):
        axis = item.getAxis(side)
        axis.setPen(pg.mkPen(MUTED))
        axis.setTextPen(pg.mkPen(INK))
        axis.setTickFont(_font(13))
        axis.setLabel(axis.labelText, axis.labelUnits, **{"color": INK, "font-size": "14px"})
    legend = item.legend
    if legend is not None:
        legend.setPen(None)
        legend.setBrush(None)
        legend.setLabelTextColor(INK)
        legend.setLabelTextSize("13px")
        for _sample, label in legend.items:
            label.setText(label.text)  # setLabelTextSize stores the size; a label applies it when set
    for text in [i for i in item.getViewBox().allChildren() if isinstance(i, pg.TextItem)]:
        text.setFont(_font(13))
        if text.color.lightnessF() > 0.7:  # ink meant for a dark background
            text.setColor(INK)


def _paint(painter: QPainter, review: Review) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.fillRect(QRectF(0, 0, WIDTH, HEIGHT), QColor("white"))
    c = _Canvas(painter)
    painter.fillRect(QRectF(0, 0, WIDTH, 6), QColor(ACCENT))
    c.text(QRectF(MARGIN, 22, WIDTH - 2 * MARGIN - 160, 44), review.title, 30, bold=True)
    c.text(QRectF(MARGIN, 62, WIDTH - 2 * MARGIN, 24), review.subtitle, 16, color=MUTED)
    c.text(QRectF(WIDTH - MARGIN - 150, 26, 150, 24), "tflaunch", 16, bold=True, color=ACCENT,
           flags=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
    top = 100.0
    if review.headline:
        top += c.text(QRectF(MARGIN, top, WIDTH - 2 * MARGIN, 56), review.headline, 19, bold=True, color=ACCENT) + 10
    left = QRectF(MARGIN, top, 700, 490 - top)  # ends above the bottom row of charts and tables
    right = QRectF(780, top, WIDTH - 780 - MARGIN, 360)
    bottom = QRectF(MARGIN, 500, WIDTH - 2 * MARGIN, HEIGHT - 500 - MARGIN)
    c.facts(left, review.facts)
    header, rows = review.table or ([], [])
    if review.kind in ("run", "profile"):
        waterfall = Waterfall()
        waterfall.show_spans(review.series[0].spans, script="script" in review.series[0].spans,
                             gaps=review.series[0].gaps)
        c.plot(right, waterfall)
        if review.kind == "run" and review.series[0].samples:
            memory = MemoryPlot()
            first = review.series[0]
            memory.show_series(first.samples, first.spans, first.peak, first.gpu_samples, first.allocator)
            c.plot(QRectF(bottom.left(), bottom.top(), 960, bottom.height()), memory)
            c.table(QRectF(bottom.left() + 990, bottom.top(), bottom.width() - 990, bottom.height()), header, rows)
        else:
            c.table(bottom, header, rows)
    elif review.kind == "comparison":
        bars = pg.PlotWidget(background="w")
        setup_grouped_bars(bars.getPlotItem())
        draw_grouped_bars(bars.getPlotItem(), [s.bars for s in review.series])
        c.plot(QRectF(right.left(), right.top() + 30, right.width(), right.height() - 30), bars)
        _legend(c, QRectF(right.left(), right.top(), right.width(), 26), [s.label for s in review.series])
        memory = pg.PlotWidget(background="w")
        setup_memory_overlay(memory.getPlotItem())
        draw_memory_overlay(memory.getPlotItem(), [s.samples for s in review.series])
        _draw_gpu_overlay(memory.getPlotItem(), review.series)
        c.plot(QRectF(bottom.left(), bottom.top(), 560, bottom.height()), memory)
        c.table(QRectF(bottom.left() + 590, bottom.top(), bottom.width() - 590, bottom.height()), header, rows, 13)
    else:  # sweep
        strips = pg.PlotWidget(background="w")
        draw_strips(strips.getPlotItem(), review.distributions, review.objective)
        c.plot(right, strips)
        if review.instances:  # the counts' figures under the results, each table its rows' height
            lines = len(rows) + len(review.instances[1]) + 2
            size = max(10, min(13, int((bottom.height() - 8) / lines) - 14))  # a row is size + 14 pixels
            results_h = min((len(rows) + 1) * (size + 14) + 8, bottom.height() / 2)
            c.table(QRectF(bottom.left(), bottom.top(), bottom.width(), results_h), header, rows, size)
            c.table(QRectF(bottom.left(), bottom.top() + results_h, bottom.width(), bottom.height() - results_h),
                    *review.instances, size)
        else:
            c.table(bottom, header, rows, 13)


# Each GPU's curve in its run's colour, told apart from the RSS (solid) by its line style.
_GPU_STYLES = ((Qt.PenStyle.DashLine, "dashed"), (Qt.PenStyle.DotLine, "dotted"),
               (Qt.PenStyle.DashDotLine, "dash-dot"), (Qt.PenStyle.DashDotDotLine, "dash-dot-dot"))


def _draw_gpu_overlay(plot: pg.PlotItem, series: list[Series]) -> None:
    """The comparison's GPU memory beside its RSS curves: per run and GPU, a line in the run's
    colour whose style names the GPU, said in the chart's title."""
    gpus = sorted({gpu for s in series for _, used in s.gpu_samples for gpu in used})
    if not gpus:
        return
    for i, s in enumerate(series):
        for k, gpu in enumerate(gpus):
            points = [(t, used[gpu] / MIB) for t, used in s.gpu_samples if gpu in used]
            if points:
                t, mib = zip(*points, strict=True)
                style = _GPU_STYLES[k % len(_GPU_STYLES)][0]
                plot.plot(t, mib, pen=pg.mkPen(run_color(i), width=2, style=style))
    key = ", ".join(f"{_GPU_STYLES[k % len(_GPU_STYLES)][1]} GPU {gpu}" for k, gpu in enumerate(gpus))
    plot.setTitle(f"solid: process tree RSS; {key} (NVML)", color=INK, size="10pt")


def _legend(c: _Canvas, rect: QRectF, labels: list[str]) -> None:
    """One swatch and label a run on one line; labels too long for it share it equally, elided."""
    metrics = QFontMetricsF(_font(14))
    share = rect.width() / max(len(labels), 1) - 44
    fits = sum(metrics.horizontalAdvance(label) + 44 for label in labels) <= rect.width()
    x = rect.left()
    for i, label in enumerate(labels):
        shown = label if fits else metrics.elidedText(label, Qt.TextElideMode.ElideMiddle, share)
        c.p.fillRect(QRectF(x, rect.top() + 6, 14, 14), QColor(run_color(i)))
        width = metrics.horizontalAdvance(shown)
        c.text(QRectF(x + 20, rect.top() + 3, width + 4, 22), shown, 14)
        x += width + 44


def render_image(review: Review, scale: int = 1) -> QImage:
    """The review on a QImage of 1600×900 pixels times `scale`."""
    image = QImage(WIDTH * scale, HEIGHT * scale, QImage.Format.Format_ARGB32)
    image.setDotsPerMeterX(DOTS_PER_METER * scale)
    image.setDotsPerMeterY(DOTS_PER_METER * scale)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        if scale == 1:
            _paint(painter, review)
        else:
            # A plot's lines are cosmetic pens, which no painter scale widens: at 2× they
            # came out half as thick as the rest. The SVG holds them in page pixels (its
            # geometry is the PNG's, tests/gui/test_export_geometry.py), so scaled it is
            # the same picture, every line included, only sharper.
            QSvgRenderer(QByteArray(render_svg(review))).render(painter)
    finally:
        painter.end()
    return image


def render_svg(review: Review) -> bytes:
    """The review as SVG 1.1 whose shapes lie in page pixels (a viewBox of 1600×900)."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # SVG 1.1, not Qt's default SVG Tiny 1.2: Tiny has no clipping, so bands and curves
    # would spill out of their plots.
    generator = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)
    generator.setOutputDevice(buffer)
    # The PNG's resolution: a font or pen given in points comes out the same size in both.
    generator.setResolution(DPI)
    generator.setSize(QSize(WIDTH, HEIGHT))
    generator.setViewBox(QRectF(0, 0, WIDTH, HEIGHT))
    generator.setTitle(review.title)
    generator.setDescription("tflaunch review")
    painter = QPainter(generator)
    try:
        _paint(painter, review)
    finally:
        painter.end()
    return page_coordinates(buffer.data().data())


def png_bytes(review: Review, scale: int = 1) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    render_image(review, scale).save(buffer, "PNG")
    return data.data()


def write(review: Review, path: Path, fmt: str | None = None, scale: int = 1) -> Path:
    """Write the review as png, svg, md or csv (from the file's extension by default)."""
    fmt = (fmt or Path(path).suffix.lstrip(".") or "png").lower()
    data = {"png": lambda: png_bytes(review, scale), "svg": lambda: render_svg(review),
            "md": lambda: review.markdown().encode(), "csv": lambda: review.csv().encode()}
    if fmt not in data:
        raise ValueError(f"Cannot write a review as '{fmt}': use png, svg, md or csv.")
    Path(path).write_bytes(data[fmt]())
    return Path(path)
