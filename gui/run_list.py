"""RunList: the runs of this session; choosing one shows it again."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from tflaunch.core.run.record import RunRecord
from tflaunch.core.units import format_bytes, format_duration

from .palette import STATUS_COLORS

COLUMNS = ("#", "Model", "Settings", "Ready", "Peak", "Status")


class RunList(QTableWidget):
    run_selected = Signal(object)  # RunRecord

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.records: list[RunRecord] = []
        self.setHorizontalHeaderLabels(COLUMNS)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setWordWrap(False)
        header = self.horizontalHeader()
        for col in range(len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.itemSelectionChanged.connect(self._on_selection)

    def add_record(self, record: RunRecord) -> None:
        self.records.append(record)
        row = self.rowCount()
        self.insertRow(row)
        model = record.subject
        status = record.status.value + (" (assumed input shape)" if record.assumed_inputs else "")
        cells = (str(row + 1), model, record.config.summary(), format_duration(record.time_to_ready),
                 format_bytes(record.peak_rss), status)
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(record.headline if col == 5 else f"{record.config.model}\n{record.config.summary()}")
            if col in (0, 3, 4):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.setItem(row, col, item)
        self.item(row, 5).setForeground(QColor(STATUS_COLORS[record.status.value]))
        self.blockSignals(True)
        self.selectRow(row)
        self.blockSignals(False)
        self.scrollToBottom()

    def _on_selection(self) -> None:
        rows = self.selectionModel().selectedRows()
        if rows:
            self.run_selected.emit(self.records[rows[0].row()])
