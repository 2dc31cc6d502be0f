"""ResultsTable: a sweep's settings ranked, in the columns the terminal and review images use.

One widget for a local sweep and for each node type of a cluster sweep, so both read the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from tflaunch.core.sweep.plan import CandidateResult
from tflaunch.core.sweep.report import result_rows

from ..widgets.palette import STATE_COLORS, highlight_background, readable

FIGURE_COLUMNS = (0, 2, 3, 4, 5, 6)  # right-aligned: rank, median, range, IQR, ratio, runs


class ResultsTable(QTableWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        header, _ = result_rows([], "ready")
        super().__init__(0, len(header), parent)
        self.setHorizontalHeaderLabels(header)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        columns = self.horizontalHeader()
        columns.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        columns.setStretchLastSection(True)

    def show_results(self, results: Sequence[CandidateResult], objective: str) -> None:
        """The ranked results: the leader highlighted, settings stopped by racing greyed
        (their reason in the tooltip). Colours are the palette's at the time of the call."""
        header, rows = result_rows(results, objective)
        self.setHorizontalHeaderLabels(header)
        self.setRowCount(len(results))
        for row, (result, cells) in enumerate(zip(results, rows, strict=False)):
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col in FIGURE_COLUMNS:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if result.stopped:
                    item.setToolTip(result.stopped)
                    item.setForeground(readable(STATE_COLORS["waiting"]))
                if row == 0 and result.spread:
                    item.setBackground(highlight_background())
                self.setItem(row, col, item)

    def wanted_width(self) -> int:
        """The width that shows every column whole."""
        return self.horizontalHeader().length() + 2 * self.frameWidth() + self.verticalScrollBar().sizeHint().width()

    def wanted_height(self) -> int:
        """The height that shows every row without scrolling."""
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        return self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth() + rows + 2
