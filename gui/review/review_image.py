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

import re
from pathlib import Path

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QTextOption
from PySide6.QtSvg import QSvgGenerator, QSvgRenderer

from tflaunch.core.report import exports
from tflaunch.core.report.review import Review, Series
from tflaunch.core.units import MIB

from ..plots.charts import (
    draw_grouped_bars,
    draw_memory_overlay,
    draw_strips,
    run_color,
    setup_grouped_bars,
    setup_memory_overlay,
)
from ..plots.memory_plot import MemoryPlot
from ..plots.plot_painting import paint_plot
from ..plots.waterfall import Waterfall
from .svg_geometry import page_coordinates

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

    def height(self, width: float, text: str, size: int, bold: bool = False) -> float:
        """The height `text` takes wrapped to `width` (as text() wraps it)."""
        self.p.setFont(_font(size, bold))
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        return self.p.boundingRect(QRectF(0, 0, width, 10_000), text, option).height()

    def facts(self, rect: QRectF, facts: list[tuple[str, str]]) -> float:
        """Each fact whole, or not at all: at 15 px, else 13 px where that holds them all;
        those left out are counted in a last line (the Markdown has every one)."""
        value_w = rect.width() - 215
        for size in (15, 14, 13):
            needed = [max(self.height(200, label, size, True), self.height(value_w, value, size)) + 8
                      for label, value in facts]
            if sum(needed) <= rect.height():
                break
        y, shown = rect.top(), 0
        for (label, value), h in zip(facts, needed, strict=True):
            room = rect.bottom() - y - (0 if shown == len(facts) - 1 else 24)
            if h > room:
                break
            self.text(QRectF(rect.left(), y, 200, h), label, size, bold=True, color=MUTED)
            self.text(QRectF(rect.left() + 215, y, value_w, h), value, size)
            y += h
            shown += 1
        if shown < len(facts):
            left = len(facts) - shown
            self.text(QRectF(rect.left(), y, rect.width(), 22), f"… and {left} more fact{'s' if left > 1 else ''} "
                      "(in the Markdown export)", 13, color=MUTED)
            y += 22
        return y - rect.top()

    def table(self, rect: QRectF, header: list[str], rows: list[list[str]], largest: int = 14,
              names: int = 0) -> None:
        """A table that fits rect: columns sized to their text, the type made smaller (to
        10 px) until every column and row fits; past that only column `names` (the names
        of things) is elided, and rows left out are counted. A value is never cut."""
        pad = 10
        for size in range(largest, 9, -1):
            metrics = QFontMetricsF(_font(size, True))
            widths = [max([metrics.horizontalAdvance(h)] + [metrics.horizontalAdvance(r[i]) for r in rows]) + 2 * pad
                      for i, h in enumerate(header)]
            if sum(widths) <= rect.width() and (len(rows) + 1) * _row_height(size) <= rect.height():
                break
        excess = sum(widths) - rect.width()
        if excess > 0:  # the names give way, elided, never a value
            widths[names] = max(80.0, widths[names] - excess)
        row_h = _row_height(size)
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
                metrics = QFontMetricsF(self.p.font())
                shown = metrics.elidedText(cell, Qt.TextElideMode.ElideRight, widths[i] - 2 * pad) if i == names \
                    else cell
                numeric = r > 0 and i > 0 and _FIGURE.match(cell) is not None
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


# A cell that is a figure, or a range of figures, with its unit: right-aligned as numbers are.
_NUMBER = r"[−+]?\d[\d.,]*(?: ?(?:µs|ms|s|min|B|KiB|MiB|GiB|%|×))?(?:/call|/step)?"
_FIGURE = re.compile(rf"^{_NUMBER}(?: ?[–-] ?{_NUMBER})?(?: \([\d.,–-]+\))?$")


def _row_height(size: int) -> int:
    """A table row's height for type of `size` px: a line and a little air."""
    return round(size * 1.4) + 8


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
    # The title whole: on one line in smaller type where it fits, else on two, the subtitle and
    # all below it moved down (a program's command line ran onto the subtitle).
    title_w = WIDTH - 2 * MARGIN - 160
    size = next((px for px in (30, 26, 22) if c.height(title_w, review.title, px, True) <= 1.5 * px), 22)
    title_h = c.height(title_w, review.title, size, True)
    c.text(QRectF(MARGIN, 22, title_w, title_h), review.title, size, bold=True)
    below_title = max(62.0, 22 + title_h + 4)
    c.text(QRectF(MARGIN, below_title, WIDTH - 2 * MARGIN, 24), review.subtitle, 16, color=MUTED)
    c.text(QRectF(WIDTH - MARGIN - 150, 26, 150, 24), "tflaunch", 16, bold=True, color=ACCENT,
           flags=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
    top = below_title + 38
    if review.headline:  # whole, in at most three lines: smaller type before a cut
        size = next((px for px in (19, 17, 15)
                     if c.height(WIDTH - 2 * MARGIN, review.headline, px, True) <= 3 * px * 1.3), 14)
        height = c.height(WIDTH - 2 * MARGIN, review.headline, size, True)
        top += c.text(QRectF(MARGIN, top, WIDTH - 2 * MARGIN, height), review.headline, size, bold=True,
                      color=ACCENT) + 10
    left = QRectF(MARGIN, top, 700, 490 - top)  # ends above the bottom row of charts and tables
    right = QRectF(780, top, WIDTH - 780 - MARGIN, 360)
    bottom = QRectF(MARGIN, 500, WIDTH - 2 * MARGIN, HEIGHT - 500 - MARGIN)
    c.facts(left, review.facts)
    header, rows = review.table or ([], [])
    if review.kind in ("run", "profile"):
        waterfall = Waterfall()
        waterfall.show_spans(review.series[0].spans, gaps=review.series[0].gaps)
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
        legend_h = _legend(c, QRectF(right.left(), right.top(), right.width(), right.height() / 2),
                           [s.label for s in review.series])
        bars = pg.PlotWidget(background="w", enableMenu=False)
        setup_grouped_bars(bars.getPlotItem())
        draw_grouped_bars(bars.getPlotItem(), [s.bars for s in review.series], [s.ranges for s in review.series])
        c.plot(QRectF(right.left(), right.top() + legend_h + 4, right.width(), right.height() - legend_h - 4), bars)
        memory = pg.PlotWidget(background="w", enableMenu=False)
        setup_memory_overlay(memory.getPlotItem())
        draw_memory_overlay(memory.getPlotItem(), [s.samples for s in review.series])
        titles = [_draw_gpu_overlay(memory.getPlotItem(), review.series)]
        if any(s.runs > 1 for s in review.series):
            titles.insert(0, "each side's run of median time to ready")
        if any(titles):
            memory.getPlotItem().setTitle("; ".join(t for t in titles if t), color=INK, size="10pt")
        c.plot(QRectF(bottom.left(), bottom.top(), 560, bottom.height()), memory)
        c.table(QRectF(bottom.left() + 590, bottom.top(), bottom.width() - 590, bottom.height()), header, rows, 13)
    else:  # sweep
        strips = pg.PlotWidget(background="w", enableMenu=False)
        draw_strips(strips.getPlotItem(), review.distributions, review.objective)
        c.plot(right, strips)
        if review.instances:  # the counts' figures under the results, each table its rows' height
            lines = len(rows) + len(review.instances[1]) + 2
            size = next((px for px in range(13, 9, -1) if lines * _row_height(px) + 8 <= bottom.height()), 10)
            results_h = min((len(rows) + 1) * _row_height(size) + 8, bottom.height() / 2)
            c.table(QRectF(bottom.left(), bottom.top(), bottom.width(), results_h), header, rows, size, names=1)
            c.table(QRectF(bottom.left(), bottom.top() + results_h, bottom.width(), bottom.height() - results_h),
                    *review.instances, size)
        else:
            c.table(bottom, header, rows, 13, names=1)


# Each GPU's curve in its run's colour, told apart from the RSS (solid) by its line style.
_GPU_STYLES = ((Qt.PenStyle.DashLine, "dashed"), (Qt.PenStyle.DotLine, "dotted"),
               (Qt.PenStyle.DashDotLine, "dash-dot"), (Qt.PenStyle.DashDotDotLine, "dash-dot-dot"))


def _draw_gpu_overlay(plot: pg.PlotItem, series: list[Series]) -> str:
    """The comparison's GPU memory beside its RSS curves: per run and GPU, a line in the run's
    colour whose style names the GPU; returns the key for the chart's title ("" without GPUs)."""
    gpus = sorted({gpu for s in series for _, used in s.gpu_samples for gpu in used})
    if not gpus:
        return ""
    for i, s in enumerate(series):
        for k, gpu in enumerate(gpus):
            points = [(t, used[gpu] / MIB) for t, used in s.gpu_samples if gpu in used]
            if points:
                t, mib = zip(*points, strict=True)
                style = _GPU_STYLES[k % len(_GPU_STYLES)][0]
                plot.plot(t, mib, pen=pg.mkPen(run_color(i), width=2, style=style))
    key = ", ".join(f"{_GPU_STYLES[k % len(_GPU_STYLES)][1]} GPU {gpu}" for k, gpu in enumerate(gpus))
    return f"solid: process tree RSS; {key} (NVML)"


LEGEND_SIZE, LEGEND_LINE = 14, 24  # px


def _legend(c: _Canvas, rect: QRectF, labels: list[str]) -> float:
    """A swatch and label a run or side, flowing onto as many lines as they need (in
    rect's height); only a label longer than a whole line is elided. Returns the height."""
    metrics = QFontMetricsF(_font(LEGEND_SIZE))
    x, y = rect.left(), rect.top()
    for i, label in enumerate(labels):
        shown = metrics.elidedText(label, Qt.TextElideMode.ElideMiddle, rect.width() - 24)
        width = metrics.horizontalAdvance(shown)
        if x > rect.left() and x + 20 + width > rect.right():
            x, y = rect.left(), y + LEGEND_LINE
        c.p.fillRect(QRectF(x, y + 6, 14, 14), QColor(run_color(i)))
        c.text(QRectF(x + 20, y + 3, width + 4, LEGEND_LINE - 2), shown, LEGEND_SIZE)
        x += 20 + width + 24
    return y + LEGEND_LINE - rect.top()


def measure_text(text: str, family: str, pixels: float, bold: bool) -> tuple[float, float, float]:
    """(width, ascent, descent) of text in page pixels, as the review draws it: for
    svg_geometry.text_boxes, which checks where the SVG's words lie."""
    font = QFont(family)
    font.setPixelSize(max(1, round(pixels)))
    font.setBold(bold)
    metrics = QFontMetricsF(font)
    return metrics.horizontalAdvance(text), metrics.ascent(), metrics.descent()


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
    guessed = exports.guess(exports.REVIEW, path)
    try:
        found = exports.find(exports.REVIEW, fmt.lower()) if fmt else guessed or exports.find(exports.REVIEW, "png")
    except ValueError as exc:
        raise ValueError(f"{str(exc).capitalize()}.") from None  # "Cannot write a review as 'x': use png, …"
    drawn = {"png": lambda: png_bytes(review, scale), "svg": lambda: render_svg(review)}
    write_text = found.write_review
    data = exports.encoded(write_text(review), path) if write_text is not None else drawn[found.name]()
    Path(path).write_bytes(data)
    return Path(path)
