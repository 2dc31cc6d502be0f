"""CompareView: runs side by side against a baseline, grouped into sides by their settings.

Each side is its runs' median, range and count (core/report/sides.py); a difference is
coloured as a win or a loss only where both sides have runs enough and their ranges do not
overlap. With too few runs the view says so, and offers to sweep the settings compared.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QBrush, QFontMetrics, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.compare import (
    memory_rows,
    row_label,
    rows_for,
    run_ident,
    setting_rows,
    short_row_label,
    time_rows,
)
from tflaunch.core.report.sides import (
    Difference,
    Side,
    block_note,
    differences,
    headline,
    measured,
    side_labels,
    sides_of,
    too_few_note,
)
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.stats import MIN_RUNS_TO_COMPARE, summarize
from tflaunch.core.units import format_bytes

if TYPE_CHECKING:  # the review's modules load when a review is asked for, not with the tab
    from tflaunch.core.report.review import Review

from ..plots.charts import draw_grouped_bars, draw_memory_overlay, run_color, setup_grouped_bars, setup_memory_overlay
from ..plots.plot_theme import follow_palette
from ..widgets.palette import STATE_COLORS, highlight_background, keep_colours, readable
from ..widgets.wrapping_label import WrappingLabel

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
MIN_CHART_HEIGHT = 120  # px
TABLE_SHARE = 0.6  # of the height below the legend, at most, for the table


def run_label(record: RunRecord, index: int) -> str:
    """The run's id and all its settings (tooltips; the view's labels name what differs)."""
    return f"{run_ident(record, index)} {record.config.summary()}"


def side_label(side: Side) -> str:
    """A side's runs, their kind where it is not plain, and all its settings (tooltips)."""
    kind = side.runs[0].kind
    return (f"{side.ident} ({side.n} run{'s' if side.n > 1 else ''}{'' if kind.plain else ', ' + kind.words}) "
            f"{side.config.summary()}")


def _bytes_text(values: list[int | None]) -> str:
    """A side's memory figure: one run's value, or the median with its range and count."""
    summary = summarize(values)
    if summary is None:
        return format_bytes(None)
    if summary.n == 1:
        return format_bytes(summary.median)
    return f"{format_bytes(summary.median)} ({format_bytes(summary.low)}–{format_bytes(summary.high)}, n={summary.n})"


def _absent(side: Side) -> str:
    """A side's cell without a figure: how its runs ended when none got there (a bare "–"
    left a failed run unexplained), else that the row was not reported."""
    ended = {r.status_line for r in side.runs if r.status is not RunStatus.OK}
    if len(ended) == 1 and all(r.status is not RunStatus.OK for r in side.runs):
        return f"– ({ended.pop()})"
    return "– (not reported)"


def _why(delta: Difference) -> str:
    """A cell's tooltip: why its difference is, or is not, a result."""
    if delta.value is None or delta.baseline is None:
        return "Not measured on one of the sides"
    if not delta.enough:
        return (f"Fewer than {MIN_RUNS_TO_COMPARE} runs on a side: no spread to tell a difference from noise. "
                f"Measure {MIN_RUNS_TO_COMPARE} or more of each (Sweep these settings).")
    if delta.real:
        return "Both sides have enough runs and their ranges (min to max) do not overlap"
    return "The ranges (min to max) overlap: the difference is within the run-to-run noise"


def _table(stretch_last: bool) -> QTableWidget:
    """Columns as wide as their text; `stretch_last` for texts that may be elided (paths),
    never for the differences, which a narrow table scrolls to instead of cutting."""
    table = QTableWidget()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    table.setWordWrap(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(stretch_last)
    rows = table.verticalHeader()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(table.fontMetrics().height() + 8)  # compact: every row in view
    return table


def _rows_height(table: QTableWidget, rows: int | None = None) -> int:
    """Height that shows `rows` rows of the table (all by default) without scrolling."""
    count = table.rowCount() if rows is None else rows
    return (table.horizontalHeader().sizeHint().height() + table.verticalHeader().defaultSectionSize() * count
            + 2 * table.frameWidth() + 2)


class CompareView(QWidget):
    # The typical run of each side (its median time to ready), and the baseline side's index.
    save_profile_requested = Signal(list, int)
    # The baseline side's settings and the other sides' (LaunchConfig, list[LaunchConfig]):
    # measure them properly, as a sweep (core/report/sides.py sweep_axes says what to vary).
    sweep_requested = Signal(object, list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs: list[RunRecord] = []
        self.sides: list[Side] = []
        self.labels: list[str] = []  # short: the runs and the settings that tell the sides apart
        self.baseline = QComboBox()
        self.baseline.setToolTip("The side the others are measured against")
        # Long labels (paths) must not widen the window: the combo elides, its items have tooltips.
        self.baseline.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.baseline.setMinimumContentsLength(12)
        self.baseline.currentIndexChanged.connect(lambda _i: self._redraw())
        self.save_best = QPushButton("Save best as profile…")
        self.save_best.setToolTip("Save the fastest side's settings, with the baseline as evidence")
        self.save_best.clicked.connect(
            lambda: self.save_profile_requested.emit([s.typical for s in self.sides], self.baseline_side))
        self.sweep = QPushButton("Sweep these settings…")
        self.sweep.setToolTip(f"Measure the settings compared here {MIN_RUNS_TO_COMPARE} or more times each, "
                              "interleaved, in the Sweep tab")
        self.sweep.clicked.connect(self._on_sweep_clicked)
        self.hint = QLabel("Select two or more runs in History and press Compare.")
        # With no runs it is the whole tab (blank axes said nothing); under one run, a line.
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        # Said plainly where a side has too few runs: no spread, so no difference is claimed.
        self.notice = WrappingLabel()
        self.notice.setVisible(False)
        # The comparison in a sentence (the review's headline): a winner only where it is one.
        self.verdict = WrappingLabel()
        bold = self.verdict.font()
        bold.setBold(True)
        self.verdict.setFont(bold)  # in bold, not the Run tab's large headline: the charts need the height
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict.setVisible(False)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Baseline:"))
        bar.addWidget(self.baseline, 1)
        bar.addWidget(self.sweep)
        bar.addWidget(self.save_best)

        self.bars = pg.PlotWidget(background="w", enableMenu=False)
        self.bars.setMenuEnabled(False)
        self.bars.setMouseEnabled(x=False, y=False)
        setup_grouped_bars(self.bars.getPlotItem())
        # The legend sits above the charts: inside, it would cover the tallest bars.
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.memory = pg.PlotWidget(background="w", enableMenu=False)
        self.memory.setMenuEnabled(False)
        setup_memory_overlay(self.memory.getPlotItem())
        for plot in (self.bars, self.memory):
            plot.setMinimumHeight(MIN_CHART_HEIGHT)
            follow_palette(plot)
        self.phases = _table(stretch_last=False)
        self.settings = _table(stretch_last=True)
        self._bar_ticks: list[tuple[int, str]] = []
        self.bars.installEventFilter(self)  # group names staggered when the chart is narrow

        self.charts = QSplitter(Qt.Orientation.Horizontal)
        self.charts.addWidget(self.bars)
        self.charts.addWidget(self.memory)
        self.charts.setChildrenCollapsible(False)
        # One table at a time, each the whole width: side by side, neither showed its
        # difference column whole on a small screen.
        self.tables = QTabWidget()
        self.tables.setDocumentMode(True)
        self.tables.addTab(self.phases, "Phases")
        self.tables.addTab(self.settings, "Settings")
        self.body = QSplitter(Qt.Orientation.Vertical)
        self.body.addWidget(self.charts)
        self.body.addWidget(self.tables)
        self.body.setChildrenCollapsible(False)
        self.body.setStretchFactor(0, 1)
        # Four rows at least; more as the height allows (see _share_height).
        self.tables.setMinimumHeight(self.tables.tabBar().sizeHint().height() + _rows_height(self.phases, 4))
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.hint)
        layout.addWidget(self.verdict)
        layout.addWidget(self.notice)
        layout.addWidget(self.legend)
        layout.addWidget(self.body, 1)
        self.show_runs([])
        keep_colours(self, self._redraw)  # the tables' colours are chosen for the palette

    @property
    def baseline_side(self) -> int:
        return max(self.baseline.currentIndex(), 0)

    def review(self) -> Review | None:
        if len(self.runs) < 2:
            return None
        from tflaunch.core.report.review import comparison_review

        return comparison_review(self.runs, self.runs.index(self.sides[self.baseline_side].runs[0]))

    def show_runs(self, runs: list[RunRecord], baseline: int = 0) -> None:
        """Show `runs`, grouped into sides; `baseline`, the index of a run of the baseline side."""
        self.runs = list(runs)
        self.sides = sides_of(self.runs)
        self.labels = side_labels(self.sides)
        self.hint.setVisible(len(self.runs) < 2)
        self.body.setVisible(bool(self.runs))
        self.legend.setVisible(bool(self.runs))
        self.save_best.setEnabled(len(self.sides) >= 2)
        self.sweep.setEnabled(len(self.sides) >= 2)
        first = next((i for i, side in enumerate(self.sides) if runs[baseline] in side.runs), 0) if runs else -1
        self.baseline.blockSignals(True)
        self.baseline.clear()
        for i, (side, label) in enumerate(zip(self.sides, self.labels, strict=True)):
            self.baseline.addItem(label)
            self.baseline.setItemData(i, side_label(side), Qt.ItemDataRole.ToolTipRole)
        self.baseline.setCurrentIndex(first)
        self.baseline.blockSignals(False)
        self._redraw()
        self._share_height()

    def _on_sweep_clicked(self) -> None:
        if len(self.sides) < 2:
            return
        base = self.baseline_side
        self.sweep_requested.emit(self.sides[base].config,
                                  [side.config for i, side in enumerate(self.sides) if i != base])

    def _say_verdict(self, base: int) -> None:
        """The headline, and why it may not crown anyone: too few runs, or sides measured in
        separate blocks (then the sweep, which interleaves them, is offered)."""
        compared = len(self.runs) >= 2 and len(self.sides) >= 2
        self.verdict.setVisible(compared)
        self.verdict.setText(headline(self.sides, self.labels, base) if compared else "")
        reasons = [note for note in (too_few_note(self.sides) if compared else None,
                                     block_note(self.sides, base) if compared else None) if note]
        # A reason the headline already says ("No verdict: 1 run each: ...") is not said twice.
        notes = [note for note in reasons if note not in self.verdict.text()]
        if reasons and "Sweep these settings" not in self.verdict.text():
            notes.append("Sweep these settings measures each side again, interleaved, before a winner is named.")
        self.notice.setVisible(bool(notes))
        self.notice.setText(" ".join(notes))

    def _redraw(self) -> None:
        base = self.baseline_side
        self._say_verdict(base)
        self._draw_bars()
        self._draw_memory()
        self._fill_phases(base)
        self._fill_settings()

    def _share_height(self) -> None:
        """Every row of the times where that leaves the charts most of their room, the rest
        to the charts; the table scrolls on a small screen."""
        total = sum(self.body.sizes())
        if total <= 0:
            return
        wanted = _rows_height(self.phases) + self.tables.tabBar().sizeHint().height()
        tables = max(self.tables.minimumHeight(), min(wanted, int(total * TABLE_SHARE)))
        self.body.setSizes([total - tables, tables])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.bars and event.type() == QEvent.Type.Resize:
            self._fit_bar_labels()
        return False

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._share_height()

    def _fit_bar_labels(self) -> None:
        """The chart's group names side by side where they fit, else on two staggered lines."""
        axis = self.bars.getPlotItem().getAxis("bottom")
        names = [short_row_label(row) for row in time_rows(self.runs)]
        metrics = QFontMetrics(axis.style.get("tickFont") or self.bars.font())
        room = (self.bars.width() - self.bars.getPlotItem().getAxis("left").width() - 20) / len(names)
        stagger = room < max(metrics.horizontalAdvance(name) for name in names) + 8
        ticks = [(i, ("\n" if stagger and i % 2 else "") + name) for i, name in enumerate(names)]
        if ticks != self._bar_ticks:
            self._bar_ticks = ticks
            axis.setTicks([ticks])
            # pyqtgraph sizes the axis for one line of text (and a bit less): room for two.
            axis.setHeight(2 * metrics.lineSpacing() + 2 * max(axis.style["tickLength"], 0) + 6 if stagger else None)

    def _draw_bars(self) -> None:
        rows = time_rows(self.runs)
        medians = [{row: (v.median if (v := side.spread(row)) else None) for row in rows} for side in self.sides]
        ranges = [{row: (v.low, v.high) for row in rows if (v := side.spread(row)) is not None and v.n > 1}
                  for side in self.sides]
        draw_grouped_bars(self.bars.getPlotItem(), medians, ranges)
        self._bar_ticks = []  # the groups may have changed: fit their names again
        self._fit_bar_labels()
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(
            f'<span style="color:{run_color(i)}">■</span>&nbsp;{html.escape(label)}'
            for i, label in enumerate(self.labels)))
        self.legend.setToolTip("\n".join(side_label(side) for side in self.sides)
                               + ("\nBars: each side's median; whiskers: its range (min to max)"
                                  if any(side.n > 1 for side in self.sides) else ""))

    def _draw_memory(self) -> None:
        curves = [(i, r.samples) for i, side in enumerate(self.sides) for r in side.runs]
        draw_memory_overlay(self.memory.getPlotItem(), [samples for _, samples in curves], [i for i, _ in curves])

    def _headers(self, table: QTableWidget, base: int | None) -> None:
        """Columns named by the sides' runs (the legend and tooltips say the rest)."""
        table.setColumnCount(len(self.sides))
        for col, side in enumerate(self.sides):
            kind = side.runs[0].kind  # a side holds runs of one kind (sides.py)
            name = side.ident if kind.plain else f"{side.ident} ({kind.short})"
            item = QTableWidgetItem(f"{name} (baseline)" if col == base else name)
            item.setToolTip(side_label(side))
            table.setHorizontalHeaderItem(col, item)

    def _fill_phases(self, base: int) -> None:
        table = self.phases
        table.clear()
        rows = rows_for(self.runs) if self.runs else ()
        memory = memory_rows(self.runs) if self.runs else [("Peak memory", [])]
        table.setRowCount(len(rows) + len(memory))
        self._headers(table, base)
        table.setVerticalHeaderLabels([row_label(r) for r in rows] + [label for label, _ in memory])
        if not self.runs:
            return
        faster, slower = readable(STATE_COLORS["done"]), readable(STATE_COLORS["failed"])
        index = {id(r): i for i, r in enumerate(self.runs)}
        for col, row_deltas in enumerate(differences(self.sides, rows, base)):
            for row, name in enumerate(rows):
                delta = row_deltas[name]
                text = measured(delta.value) if col == base else delta.describe()
                item = QTableWidgetItem(_absent(self.sides[col]) if delta.value is None else text)
                item.setTextAlignment(RIGHT)
                if col != base:
                    item.setToolTip(_why(delta))
                    if delta.real and delta.ratio is not None and abs(delta.ratio - 1) >= 0.05:
                        item.setForeground(faster if delta.faster else slower)
                table.setItem(row, col, item)
            for offset, (_, sizes) in enumerate(memory):
                peak = QTableWidgetItem(_bytes_text([sizes[index[id(r)]] for r in self.sides[col].runs]))
                peak.setTextAlignment(RIGHT)
                table.setItem(len(rows) + offset, col, peak)

    def _fill_settings(self) -> None:
        """Every setting in words; the ones that differ first, highlighted."""
        table = self.settings
        table.clear()
        rows = setting_rows([side.config for side in self.sides]) if self.sides else []
        rows = [r for r in rows if r.differs] + [r for r in rows if not r.differs]
        table.setRowCount(len(rows))
        self._headers(table, None)
        differ = sum(r.differs for r in rows)
        self.tables.setTabText(1, f"Settings ({differ} differ)" if self.sides else "Settings")
        tint = QBrush(highlight_background(self.palette()))
        ink = self.palette().color(self.palette().ColorRole.Text)
        for row, setting in enumerate(rows):
            label = QTableWidgetItem(setting.label)
            label.setToolTip(f"{setting.name}: {setting.help}")
            table.setVerticalHeaderItem(row, label)
            for col, text in enumerate(setting.values):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if setting.differs:
                    item.setBackground(tint)
                    item.setForeground(ink)
                    item.setToolTip(f"{text}\nThis setting differs between the runs")
                table.setItem(row, col, item)
