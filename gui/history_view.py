"""HistoryView: every stored run, sortable and filterable; the start of compare and re-run."""

from __future__ import annotations

import time

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QColor, QKeySequence, QShortcut, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.review import Review, comparison_review, run_review
from tflaunch.core.run.record import RunRecord
from tflaunch.core.store.history import History, HistoryError, RunSummary
from tflaunch.core.store.rows import DAMAGED
from tflaunch.core.units import format_bytes, format_duration

from .palette import STATUS_COLORS

DAMAGED_COLOR = "#9aa0a6"  # grey: a row that cannot be read
COLUMNS = ("Date", "Model", "Settings", "Ready", "Peak", "Status", "From")
_SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # numbers sort as numbers, not as their text


def _item(text: str, sort_key=None, right: bool = False) -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    item.setData(text if sort_key is None else sort_key, _SORT_ROLE)
    if right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


class HistoryView(QWidget):
    show_requested = Signal(int)
    rerun_requested = Signal(int)
    compare_requested = Signal(list)
    save_profile_requested = Signal(list)
    problem = Signal(str)  # the history could not be read or changed: file, cause, what to do

    def __init__(self, history: History | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(COLUMNS)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(_SORT_ROLE)
        self.proxy.setFilterKeyColumn(-1)  # every column
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        for col in range(len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda _index: self._emit_single(self.show_requested))
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)

        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by model, settings, status… (Ctrl+Shift+F)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        QShortcut(QKeySequence("Ctrl+Shift+F"), self, self.filter.setFocus)
        self.show_button = QPushButton("Show")
        self.show_button.setToolTip("Show the run's phases and memory (double-click)")
        self.show_button.clicked.connect(lambda: self._emit_single(self.show_requested))
        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setToolTip("Run again with the same settings")
        self.rerun_button.clicked.connect(lambda: self._emit_single(self.rerun_requested))
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Compare the selected runs (two or more)")
        self.compare_button.clicked.connect(lambda: self.compare_requested.emit(self.selected_ids()))
        self.profile_button = QPushButton("Save as profile…")
        self.profile_button.setToolTip("Save the settings, with the selected runs as evidence")
        self.profile_button.clicked.connect(lambda: self.save_profile_requested.emit(self.selected_ids()))
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the selected runs from the history (Del)")
        self.delete_button.clicked.connect(self.delete_selected)
        QShortcut(QKeySequence.StandardKey.Delete, self.table, self.delete_selected)
        self.count = QLabel()
        bar = QHBoxLayout()
        bar.addWidget(self.filter, 1)
        for button in (self.show_button, self.rerun_button, self.compare_button, self.profile_button,
                       self.delete_button):
            bar.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.table)
        layout.addWidget(self.count)
        self.refresh()

    def refresh(self) -> None:
        self.model.removeRows(0, self.model.rowCount())
        try:
            runs = self.history.list_runs() if self.history else []
        except HistoryError as exc:
            self.count.setText(str(exc))
            self.problem.emit(str(exc))
            self._update_buttons()
            return
        for run in runs:
            self.model.appendRow(self._row(run))
        where = f" in {self.history.path}" if self.history else " (the history could not be opened)"
        damaged = sum(run.status == DAMAGED for run in runs)
        self.count.setText(f"{len(runs)} runs{where}" + (f"; {damaged} damaged (hover for why)" if damaged else ""))
        self._update_buttons()

    def _row(self, run: RunSummary) -> list[QStandardItem]:
        date = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.launched_at))
        status = run.status if not run.failed_phase or run.status == "ok" else f"{run.status} ({run.failed_phase})"
        if run.assumed_inputs and run.status == "ok":
            status = "ok (assumed input shape)"
        cells = [
            _item(date, run.launched_at), _item(run.model), _item(run.settings_summary),
            _item(format_duration(run.time_to_ready),
                  run.time_to_ready if run.time_to_ready is not None else float("inf"), True),
            _item(format_bytes(run.peak_rss), run.peak_rss or 0, True), _item(status), _item(run.source),
        ]
        cells[0].setData(run.id, Qt.ItemDataRole.UserRole)
        cells[5].setForeground(QColor(STATUS_COLORS.get(run.status, "#202124")))
        if run.status == DAMAGED:
            for cell in cells:
                cell.setForeground(QColor(DAMAGED_COLOR))
                cell.setToolTip(f"This run cannot be read: {run.damage}. Delete it; the other runs are not affected.")
        return cells

    def load(self, run_ids: list[int]) -> list[RunRecord]:
        """The stored runs; none when one cannot be read, which `problem` says."""
        if self.history is None:
            return []
        try:
            return [self.history.load(i) for i in run_ids]
        except (HistoryError, KeyError) as exc:
            self.problem.emit(str(exc) if isinstance(exc, HistoryError) else f"Run {exc} is no longer in the history.")
            return []

    def review(self) -> Review | None:
        records = self.load(self.selected_ids())
        if len(records) == 1:
            return run_review(records[0])
        return comparison_review(records) if records else None

    def selected_ids(self) -> list[int]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(row, 0).data(Qt.ItemDataRole.UserRole) for row in rows]

    def select_ids(self, ids: list[int]) -> None:
        self.table.clearSelection()
        mode = self.table.selectionModel()
        for row in range(self.proxy.rowCount()):
            if self.proxy.index(row, 0).data(Qt.ItemDataRole.UserRole) in ids:
                mode.select(self.proxy.index(row, 0), mode.SelectionFlag.Select | mode.SelectionFlag.Rows)

    def delete_selected(self) -> None:
        ids = self.selected_ids()
        if ids and self.history:
            try:
                self.history.delete(ids)
            except HistoryError as exc:
                self.problem.emit(str(exc))
            self.refresh()

    def _emit_single(self, signal) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            signal.emit(ids[0])

    def _update_buttons(self) -> None:
        n = len(self.selected_ids()) if self.table.selectionModel() else 0
        self.show_button.setEnabled(n == 1)
        self.rerun_button.setEnabled(n == 1)
        self.compare_button.setEnabled(n >= 2)
        self.profile_button.setEnabled(n >= 1)
        self.delete_button.setEnabled(n >= 1)
