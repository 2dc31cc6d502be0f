"""CompareView: two or more runs side by side against a baseline."""

from __future__ import annotations

import html
from dataclasses import fields

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSplitter, QTableWidget,
    QTableWidgetItem, QVBoxLayout, QWidget,
)

from tflaunch.core.compare import ROW_LABELS, ROWS, SHORT_LABELS, deltas, differing_settings
from tflaunch.core.config import LaunchConfig
from tflaunch.core.run import RunRecord
from tflaunch.core.units import MIB, format_bytes

# Distinct from the phase colours' role: one colour per run (Tableau 10, print-safe).
RUN_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")
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
        self.save_best.clicked.connect(lambda: self.save_profile_requested.emit(self.runs, self.baseline.currentIndex()))
        self.hint = QLabel("Select two or more runs in History and press Compare.")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Baseline:"))
        bar.addWidget(self.baseline, 1)
        bar.addWidget(self.save_best)

        self.bars = pg.PlotWidget(background="w")
        self.bars.setMenuEnabled(False)
        self.bars.setMouseEnabled(x=False, y=False)
        bars_plot = self.bars.getPlotItem()
        bars_plot.getAxis("left").setLabel("Duration (s)")
        bars_plot.getAxis("left").enableAutoSIPrefix(False)
        bars_plot.getAxis("bottom").setTicks([[(i, SHORT_LABELS[r]) for i, r in enumerate(ROWS)]])
        bars_plot.showGrid(y=True, alpha=0.2)
        # The legend sits above the charts: inside, it would cover the tallest bars.
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.memory = pg.PlotWidget(background="w")
        self.memory.setMenuEnabled(False)
        memory_plot = self.memory.getPlotItem()
        for side, text in (("bottom", "Time since launch (s)"), ("left", "Memory (MiB)")):
            memory_plot.getAxis(side).enableAutoSIPrefix(False)
            memory_plot.getAxis(side).setLabel(text)
        memory_plot.showGrid(x=True, y=True, alpha=0.2)
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
        plot = self.bars.getPlotItem()
        for item in [i for i in plot.items if isinstance(i, pg.BarGraphItem)]:
            plot.removeItem(item)
        n = len(self.runs)
        width = 0.8 / max(n, 1)
        for i, record in enumerate(self.runs):
            heights = [v if (v := (record.time_to_ready if r == "ready" else record.phases[r].duration)) else 0.0
                       for r in ROWS]
            x = np.arange(len(ROWS)) - 0.4 + width * (i + 0.5)
            plot.addItem(pg.BarGraphItem(x=x, height=heights, width=width * 0.9,
                                         brush=RUN_COLORS[i % len(RUN_COLORS)], pen=pg.mkPen(None)))
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(
            f'<span style="color:{RUN_COLORS[i % len(RUN_COLORS)]}">■</span> {html.escape(run_label(r, i))}'
            for i, r in enumerate(self.runs)))

    def _draw_memory(self) -> None:
        plot = self.memory.getPlotItem()
        plot.clear()
        for i, record in enumerate(self.runs):
            if record.samples:
                t, rss = zip(*record.samples)
                plot.plot(t, np.array(rss) / MIB, pen=pg.mkPen(RUN_COLORS[i % len(RUN_COLORS)], width=2))

    def _fill_phases(self, base: int) -> None:
        table = self.phases
        table.clear()
        table.setRowCount(len(ROWS) + 1)
        table.setColumnCount(len(self.runs))
        table.setHorizontalHeaderLabels([("baseline " if i == base else "") + run_label(r, i)
                                         for i, r in enumerate(self.runs)])
        table.setVerticalHeaderLabels([ROW_LABELS[r] for r in ROWS] + ["Peak memory"])
        if not self.runs:
            return
        for col, row_deltas in enumerate(deltas(self.runs, base)):
            for row, name in enumerate(ROWS):
                delta = row_deltas[name]
                item = QTableWidgetItem(delta.describe() if col != base else delta.describe().split(" (")[0])
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col != base and delta.ratio is not None and abs(delta.ratio - 1) >= 0.05:
                    item.setForeground(QColor("#146c2e" if delta.ratio > 1 else "#b3261e"))
                table.setItem(row, col, item)
            peak = QTableWidgetItem(format_bytes(self.runs[col].peak_rss))
            peak.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(len(ROWS), col, peak)

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
