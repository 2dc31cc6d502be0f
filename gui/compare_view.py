"""CompareView: two or more runs side by side against a baseline."""

from __future__ import annotations

import html

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
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.compare import (
    ROW_LABELS,
    SHORT_LABELS,
    bar_values,
    deltas,
    memory_rows,
    rows_for,
    run_ident,
    run_labels,
    setting_rows,
    time_rows,
)
from tflaunch.core.report.review import Review, comparison_review
from tflaunch.core.run.record import RunRecord
from tflaunch.core.units import format_bytes

from .charts import draw_grouped_bars, draw_memory_overlay, run_color, setup_grouped_bars, setup_memory_overlay
from .palette import STATE_COLORS, highlight_background, keep_colours, readable
from .plot_theme import follow_palette

RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
MIN_CHART_HEIGHT = 120  # px
TABLE_SHARE = 0.6  # of the height below the legend, at most, for the table


def run_label(record: RunRecord, index: int) -> str:
    """The run's id and all its settings (tooltips; the view's labels name what differs)."""
    return f"{run_ident(record, index)} {record.config.summary()}"


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
    save_profile_requested = Signal(list, int)  # runs, index of the baseline

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs: list[RunRecord] = []
        self.labels: list[str] = []  # short: the id and the settings that tell the runs apart
        self.baseline = QComboBox()
        self.baseline.setToolTip("The run the others are measured against")
        # Long labels (paths) must not widen the window: the combo elides, its items have tooltips.
        self.baseline.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.baseline.setMinimumContentsLength(12)
        self.baseline.currentIndexChanged.connect(lambda _i: self._redraw())
        self.save_best = QPushButton("Save best as profile…")
        self.save_best.setToolTip("Save the fastest run's settings, with the baseline as evidence")
        self.save_best.clicked.connect(
            lambda: self.save_profile_requested.emit(self.runs, self.baseline.currentIndex()))
        self.hint = QLabel("Select two or more runs in History and press Compare.")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Baseline:"))
        bar.addWidget(self.baseline, 1)
        bar.addWidget(self.save_best)

        self.bars = pg.PlotWidget(background="w")
        self.bars.setMenuEnabled(False)
        self.bars.setMouseEnabled(x=False, y=False)
        setup_grouped_bars(self.bars.getPlotItem())
        # The legend sits above the charts: inside, it would cover the tallest bars.
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.memory = pg.PlotWidget(background="w")
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
        layout.addWidget(self.legend)
        layout.addWidget(self.body, 1)
        self.show_runs([])
        keep_colours(self, self._redraw)  # the tables' colours are chosen for the palette

    def review(self) -> Review | None:
        if len(self.runs) < 2:
            return None
        return comparison_review(self.runs, max(self.baseline.currentIndex(), 0))

    def show_runs(self, runs: list[RunRecord], baseline: int = 0) -> None:
        self.runs = list(runs)
        self.labels = run_labels(self.runs)
        self.hint.setVisible(len(self.runs) < 2)
        self.save_best.setEnabled(len(self.runs) >= 2)
        self.baseline.blockSignals(True)
        self.baseline.clear()
        for i, (record, label) in enumerate(zip(self.runs, self.labels, strict=True)):
            self.baseline.addItem(label)
            self.baseline.setItemData(i, run_label(record, i), Qt.ItemDataRole.ToolTipRole)
        self.baseline.setCurrentIndex(baseline if self.runs else -1)
        self.baseline.blockSignals(False)
        self._redraw()
        self._share_height()

    def _redraw(self) -> None:
        base = max(self.baseline.currentIndex(), 0)
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
        names = [SHORT_LABELS[row] for row in time_rows(self.runs)]
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
        draw_grouped_bars(self.bars.getPlotItem(), [bar_values(r, rows) for r in self.runs])
        self._bar_ticks = []  # the groups may have changed: fit their names again
        self._fit_bar_labels()
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(
            f'<span style="color:{run_color(i)}">■</span>&nbsp;{html.escape(label)}'
            for i, label in enumerate(self.labels)))
        self.legend.setToolTip("\n".join(run_label(r, i) for i, r in enumerate(self.runs)))

    def _draw_memory(self) -> None:
        draw_memory_overlay(self.memory.getPlotItem(), [r.samples for r in self.runs])

    def _headers(self, table: QTableWidget, base: int | None) -> None:
        """Columns named by run id (the legend and tooltips say the rest)."""
        table.setColumnCount(len(self.runs))
        for col, record in enumerate(self.runs):
            ident = run_ident(record, col)
            item = QTableWidgetItem(f"{ident} (baseline)" if col == base else ident)
            item.setToolTip(run_label(record, col))
            table.setHorizontalHeaderItem(col, item)

    def _fill_phases(self, base: int) -> None:
        table = self.phases
        table.clear()
        rows = rows_for(self.runs) if self.runs else ()
        memory = memory_rows(self.runs) if self.runs else [("Peak memory", [])]
        table.setRowCount(len(rows) + len(memory))
        self._headers(table, base)
        table.setVerticalHeaderLabels([ROW_LABELS[r] for r in rows] + [label for label, _ in memory])
        if not self.runs:
            return
        faster, slower = readable(STATE_COLORS["done"]), readable(STATE_COLORS["failed"])
        for col, row_deltas in enumerate(deltas(self.runs, base)):
            for row, name in enumerate(rows):
                delta = row_deltas[name]
                item = QTableWidgetItem(delta.describe() if col != base else delta.describe().split(" (")[0])
                item.setTextAlignment(RIGHT)
                if col != base and delta.ratio is not None and abs(delta.ratio - 1) >= 0.05:
                    item.setForeground(faster if delta.ratio > 1 else slower)
                table.setItem(row, col, item)
            for offset, (_, sizes) in enumerate(memory):
                peak = QTableWidgetItem(format_bytes(sizes[col]))
                peak.setTextAlignment(RIGHT)
                table.setItem(len(rows) + offset, col, peak)

    def _fill_settings(self) -> None:
        """Every setting in words; the ones that differ first, highlighted."""
        table = self.settings
        table.clear()
        rows = setting_rows([r.config for r in self.runs]) if self.runs else []
        rows = [r for r in rows if r.differs] + [r for r in rows if not r.differs]
        table.setRowCount(len(rows))
        self._headers(table, None)
        differ = sum(r.differs for r in rows)
        self.tables.setTabText(1, f"Settings ({differ} differ)" if self.runs else "Settings")
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
