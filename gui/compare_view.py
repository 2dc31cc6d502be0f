"""CompareView: two or more runs side by side against a baseline."""

from __future__ import annotations

import html
from dataclasses import fields

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
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
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.compare import ROW_LABELS, bar_values, deltas, differing_settings, rows_for
from tflaunch.core.report.review import Review, comparison_review
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.units import format_bytes

from .charts import draw_grouped_bars, draw_memory_overlay, run_color, setup_grouped_bars, setup_memory_overlay

HIGHLIGHT = QColor("#fff3c4")


def run_label(record: RunRecord, index: int) -> str:
    ident = f"#{record.history_id}" if record.history_id is not None else f"run {index + 1}"
    return f"{ident} {record.config.summary()}"


def _table() -> QTableWidget:
    table = QTableWidget()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


class CompareView(QWidget):
    save_profile_requested = Signal(list, int)  # runs, index of the baseline

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs: list[RunRecord] = []
        self.baseline = QComboBox()
        self.baseline.setToolTip("The run the others are measured against")
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
        self.phases = _table()
        self.settings = _table()

        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.bars)
        charts.addWidget(self.memory)
        tables = QSplitter(Qt.Orientation.Horizontal)
        tables.addWidget(self.phases)
        tables.addWidget(self.settings)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(charts)
        body.addWidget(tables)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.hint)
        layout.addWidget(self.legend)
        layout.addWidget(body, 1)
        self.show_runs([])

    def review(self) -> Review | None:
        if len(self.runs) < 2:
            return None
        return comparison_review(self.runs, max(self.baseline.currentIndex(), 0))

    def show_runs(self, runs: list[RunRecord], baseline: int = 0) -> None:
        self.runs = list(runs)
        self.hint.setVisible(len(self.runs) < 2)
        self.save_best.setEnabled(len(self.runs) >= 2)
        self.baseline.blockSignals(True)
        self.baseline.clear()
        self.baseline.addItems([run_label(r, i) for i, r in enumerate(self.runs)])
        self.baseline.setCurrentIndex(baseline if self.runs else -1)
        self.baseline.blockSignals(False)
        self._redraw()

    def _redraw(self) -> None:
        base = max(self.baseline.currentIndex(), 0)
        self._draw_bars()
        self._draw_memory()
        self._fill_phases(base)
        self._fill_settings()

    def _draw_bars(self) -> None:
        draw_grouped_bars(self.bars.getPlotItem(), [bar_values(r) for r in self.runs])
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(
            f'<span style="color:{run_color(i)}">■</span> {html.escape(run_label(r, i))}'
            for i, r in enumerate(self.runs)))

    def _draw_memory(self) -> None:
        draw_memory_overlay(self.memory.getPlotItem(), [r.samples for r in self.runs])

    def _fill_phases(self, base: int) -> None:
        table = self.phases
        table.clear()
        rows = rows_for(self.runs) if self.runs else ()
        table.setRowCount(len(rows) + 1)
        table.setColumnCount(len(self.runs))
        table.setHorizontalHeaderLabels([("baseline " if i == base else "") + run_label(r, i)
                                         for i, r in enumerate(self.runs)])
        table.setVerticalHeaderLabels([ROW_LABELS[r] for r in rows] + ["Peak memory"])
        if not self.runs:
            return
        for col, row_deltas in enumerate(deltas(self.runs, base)):
            for row, name in enumerate(rows):
                delta = row_deltas[name]
                item = QTableWidgetItem(delta.describe() if col != base else delta.describe().split(" (")[0])
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col != base and delta.ratio is not None and abs(delta.ratio - 1) >= 0.05:
                    item.setForeground(QColor("#146c2e" if delta.ratio > 1 else "#b3261e"))
                table.setItem(row, col, item)
            peak = QTableWidgetItem(format_bytes(self.runs[col].peak_rss))
            peak.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(len(rows), col, peak)

    def _fill_settings(self) -> None:
        table = self.settings
        table.clear()
        names = [f.name for f in fields(LaunchConfig)]
        table.setRowCount(len(names))
        table.setColumnCount(len(self.runs))
        table.setVerticalHeaderLabels(names)
        table.setHorizontalHeaderLabels([run_label(r, i) for i, r in enumerate(self.runs)])
        differing = set(differing_settings([r.config for r in self.runs])) if self.runs else set()
        for col, record in enumerate(self.runs):
            for row, name in enumerate(names):
                item = QTableWidgetItem(str(getattr(record.config, name)))
                if name in differing:
                    item.setBackground(QBrush(HIGHLIGHT))
                    item.setToolTip("This setting differs between the runs")
                table.setItem(row, col, item)
