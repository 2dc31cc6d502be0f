"""RunList: the runs of this session; choosing one shows it again.

A run is named by its History id (#41), as History, Compare and review images name it; a
run the history could not keep has no id and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from tflaunch.core.units import format_bytes, format_duration

from ..widgets.elide_delegate import ElideDelegate
from ..widgets.palette import keep_colours, status_color

if TYPE_CHECKING:
    from tflaunch.core.run.record import RunRecord

COLUMNS = ("#", "Subject", "Settings", "Ready", "Peak", "Status")
STATUS = 5
# Shown in this order: the figures first, so a narrow window elides the model and
# settings, never the numbers (tooltips give the whole text).
VISUAL_ORDER = (0, 3, 4, STATUS, 1, 2)
MODEL = 1
NOT_STORED = "not stored"
NOT_STORED_TIP = ("This run is not in the history (it is read-only or could not be written), so it has no id; "
                  "it is listed here until tflaunch closes.")


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
        # A long model path keeps its file name; the settings keep their beginning.
        self.setItemDelegateForColumn(MODEL, ElideDelegate(Qt.TextElideMode.ElideMiddle, self))
        header = self.horizontalHeader()
        for col in range(len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        for col in (MODEL, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
        for visual, logical in enumerate(VISUAL_ORDER):
            header.moveSection(header.visualIndex(logical), visual)
        header.setStretchLastSection(True)
        self.itemSelectionChanged.connect(self._on_selection)
        keep_colours(self, self._recolour)

    def add_record(self, record: RunRecord) -> None:
        self.records.append(record)
        row = self.rowCount()
        self.insertRow(row)
        model = record.subject
        status = record.status.value + (" (assumed input shape)" if record.assumed_inputs else "")
        kind = record.kind
        status += "" if kind.plain else f", {kind.short}"  # an anatomy or a warm run is not a plain one
        status_tip = "\n".join(text for text in (record.headline, kind.tip) if text)
        ident = NOT_STORED if record.history_id is None else f"#{record.history_id}"
        cells = (ident, model, record.config.summary(), format_duration(record.time_to_ready),
                 format_bytes(record.peak_rss), status)
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(status_tip if col == STATUS else self._ident_tip(record) if col == 0
                            else f"{record.config.subject}\n{record.config.summary()}")
            if col in (0, 3, 4):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.setItem(row, col, item)
        self._color_status(row)
        # The model as wide as its longest name, up to a third of the list: a path elides.
        self.setColumnWidth(MODEL, min(self.sizeHintForColumn(MODEL) + 8, max(120, self.viewport().width() // 3)))
        self.blockSignals(True)
        self.selectRow(row)
        self.blockSignals(False)
        self.scrollToBottom()

    @staticmethod
    def _ident_tip(record: RunRecord) -> str:
        if record.history_id is None:
            return NOT_STORED_TIP
        return f"History id {record.history_id}: the same run in the History tab and `tflaunch history show " \
               f"{record.history_id}`"

    def _color_status(self, row: int) -> None:
        item = self.item(row, STATUS)
        if item is not None:
            item.setForeground(status_color(self.records[row].status.value))

    def _recolour(self) -> None:
        """Status colours are chosen for the palette."""
        for row in range(self.rowCount()):
            self._color_status(row)

    def _on_selection(self) -> None:
        rows = self.selectionModel().selectedRows()
        if rows:
            self.run_selected.emit(self.records[rows[0].row()])
