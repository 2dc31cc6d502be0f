"""RunTable: the History tab's runs as a table model that holds 10,000 rows cheaply, sorted
and filtered in Python over keys made once per run.

A QStandardItemModel kept a Python wrapper per cell (70,000 for 10,000 runs), and each
collection of Python's garbage collector then walked them all, holding the window for up
to a quarter of a second; sorting through a proxy asked Python for every cell it compared.
Here a run is one tuple of plain values (which the collector does not walk), sorting is
one list sort, and the filter proxy asks one question per row.
"""

from __future__ import annotations

import bisect
import time
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QStandardItem

from tflaunch.core.store.rows import DAMAGED, RunSummary
from tflaunch.core.units import format_bytes, format_duration

from ..widgets.palette import status_color

DAMAGED_COLOR = "#9aa0a6"  # grey: a row that cannot be read
COLUMNS = ("Date", "Subject", "Settings", "Ready", "Peak", "Status", "From")
DATE, MODEL, SETTINGS, READY, PEAK, STATUS, SOURCE = range(len(COLUMNS))
ID_ROLE = Qt.ItemDataRole.UserRole.value  # on the Date cell: the run's id in the history
SORT_ROLE = ID_ROLE + 1  # what a column sorts by: numbers as numbers
_DISPLAY, _FOREGROUND = Qt.ItemDataRole.DisplayRole.value, Qt.ItemDataRole.ForegroundRole.value
_ALIGNMENT, _TOOLTIP = Qt.ItemDataRole.TextAlignmentRole.value, Qt.ItemDataRole.ToolTipRole.value
_ROLES = frozenset((_DISPLAY, _FOREGROUND, _ALIGNMENT, _TOOLTIP, ID_ROLE, SORT_ROLE))
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

# A row: a tuple of plain values only, by these indices.
_ID, _TEXTS, _KEYS, _STATUS, _TIPS, _HAYSTACK = range(6)
Index = QModelIndex | QPersistentModelIndex

_NO_TIPS = ("",) * len(COLUMNS)


def _date(run: RunSummary) -> str:
    if run.status == DAMAGED and not run.launched_at:
        return "–"  # its own time is what could not be read
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.launched_at))


def _status(run: RunSummary) -> str:
    """"ok", "failed (load)", "ok (assumed input shape)"; the kind of a run that is not a
    plain one after it (", anatomy", ", warm", ", warm + server start", ", doctor")."""
    status = run.status if not run.failed_phase or run.status == "ok" else f"{run.status} ({run.failed_phase})"
    if run.assumed_inputs and run.status == "ok":
        status = "ok (assumed input shape)"
    return status if run.kind.plain else f"{status}, {run.kind.short}"


def _ready(run: RunSummary) -> tuple[str, float]:
    """The Ready cell and its sort key (seconds)."""
    seconds = run.time_to_ready
    if seconds is None:
        return format_duration(None), float("inf")
    return format_duration(seconds), seconds


def _row(run: RunSummary) -> tuple[Any, ...]:
    status = _status(run)
    ready, ready_key = _ready(run)
    texts = (_date(run), run.model, run.settings_summary, ready, format_bytes(run.peak_rss), status, run.source)
    keys = (run.launched_at, run.model, run.settings_summary, ready_key, run.peak_rss or 0, status, run.source)
    if run.status == DAMAGED:
        tips = (f"Run {run.id} cannot be read: {run.damage}. Select it and press Delete; the other runs are not "
                "affected.",) * len(COLUMNS)
    elif not run.kind.plain:
        # The status whole first: a narrow window elides its column (history_view._fit_columns).
        tips = tuple(f"{status}: {run.kind.tip}" if column == STATUS else "" for column in range(len(COLUMNS)))
    else:
        tips = _NO_TIPS
    return run.id, texts, keys, run.status, tips, "\n".join(texts).lower()


class RunTable(QAbstractTableModel):
    """Every run loaded so far, in the order of the column it is sorted by."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[Any, ...]] = []  # ascending by the sort column; shown reversed when descending
        self._column, self._descending = DATE, True
        self._colours: dict[str, QColor] = {}  # status: its colour on the current palette

    # -- what the view asks --------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 (Qt's signature)
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 (Qt's name)
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        # Asked some 2,000 times a paint: roles compared as plain ints (a Qt enum compares
        # ten times slower), the roles a paint asks for and this model has none of first out.
        if role not in _ROLES:
            return None
        row, column = self._at(index.row()), index.column()
        if role == _DISPLAY:
            return row[_TEXTS][column]
        if role == _FOREGROUND:
            if row[_STATUS] == DAMAGED:
                return QColor(DAMAGED_COLOR)
            return self._colour(row[_STATUS]) if column == STATUS else None
        if role == _ALIGNMENT:
            return _RIGHT if column in (READY, PEAK) else None
        if role == _TOOLTIP:
            return row[_TIPS][column] or (row[_TEXTS][column] if column in (MODEL, SETTINGS) else None)  # elided whole
        if role == ID_ROLE:
            return row[_ID] if column == DATE else None
        return row[_KEYS][column]  # SORT_ROLE

    def _at(self, view_row: int) -> tuple[Any, ...]:
        return self._rows[-1 - view_row] if self._descending else self._rows[view_row]

    def _colour(self, status: str) -> QColor:
        if status not in self._colours:
            self._colours[status] = status_color(status)
        return self._colours[status]

    def run_id(self, view_row: int) -> int:
        return int(self._at(view_row)[_ID])

    def texts(self, column: int, first: int, last: int) -> list[str]:
        """The column's texts in view rows first to last."""
        return [self._at(row)[_TEXTS][column] for row in range(first, last + 1)]

    def matches(self, view_row: int, needle: str) -> bool:
        """Whether any of the row's texts holds `needle` (lower case)."""
        return needle in self._at(view_row)[_HAYSTACK]

    def item(self, view_row: int, column: int) -> QStandardItem:
        """One cell as a detached item (its text, tooltip, colour, data), for code that reads a cell."""
        index = self.index(view_row, column)
        item = QStandardItem(self.data(index))
        for role in (_FOREGROUND, _TOOLTIP, _ALIGNMENT, ID_ROLE, SORT_ROLE):
            value = self.data(index, role)
            if value is not None:
                item.setData(value, role)
        return item

    # -- what the tab does ------------------------------------------------------------------
    def clear(self) -> None:
        self.beginResetModel()
        self._rows = []
        self.endResetModel()

    def recolour(self) -> None:
        """Status colours again, for a palette that changed."""
        self._colours.clear()
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, len(COLUMNS) - 1), [_FOREGROUND])

    def append(self, runs: list[RunSummary]) -> None:
        """Runs into their sorted places."""
        new = sorted((_row(run) for run in runs), key=self._key)
        if not new:
            return
        at = self._place(new[0])
        if self._place(new[-1]) == at:
            # The usual case (pages of older runs while sorted by date): all in one place.
            self._insert(at, new)
            return
        for row in new:
            self._insert(self._place(row), [row])

    def remove(self, run_ids: set[int]) -> None:
        """These runs out of the table (those listed)."""
        positions = [i for i, row in enumerate(self._rows) if row[_ID] in run_ids]
        while positions:  # contiguous blocks, the last first: the positions before it hold
            last = first = positions.pop()
            while positions and positions[-1] == first - 1:
                first = positions.pop()
            top, bottom = sorted((self._view_row(first), self._view_row(last)))
            self.beginRemoveRows(QModelIndex(), top, bottom)
            del self._rows[first:last + 1]
            self.endRemoveRows()

    def update(self, runs: list[RunSummary]) -> None:
        """Listed runs read again: each row changed in its place, or moved to the place its
        new figures sort it into (a selection follows it)."""
        for run in runs:
            row = _row(run)
            position = next((i for i, old in enumerate(self._rows) if old[_ID] == run.id), None)
            if position is not None and self._rows[position] != row:
                self._replace(position, row)

    def _replace(self, position: int, row: tuple[Any, ...]) -> None:
        at = bisect.bisect_right(self._rows, self._key(row), key=self._key)
        at -= position < at  # its place among the other rows
        source, target = self._view_row(position), self._view_row(at)
        if target != source:
            # Before which view row it goes, counted before the move (Qt's way).
            self.beginMoveRows(QModelIndex(), source, source, QModelIndex(), target if target < source else target + 1)
            del self._rows[position]
            self._rows.insert(at, row)
            self.endMoveRows()
        else:
            self._rows[position] = row
        self.dataChanged.emit(self.index(target, 0), self.index(target, len(COLUMNS) - 1))

    def count_status(self, status: str) -> int:
        """How many runs listed have this status."""
        return sum(row[_STATUS] == status for row in self._rows)

    def view_rows(self, run_ids: set[int]) -> list[int]:
        """The view rows of these runs, those loaded."""
        return [self._view_row(i) for i, row in enumerate(self._rows) if row[_ID] in run_ids]

    def _key(self, row: tuple[Any, ...]) -> Any:
        return row[_KEYS][self._column]

    def _place(self, row: tuple[Any, ...]) -> int:
        """Where `row` goes in the ascending list: after the rows of an equal key."""
        return bisect.bisect_right(self._rows, self._key(row), key=self._key)

    def _insert(self, at: int, rows: list[tuple[Any, ...]]) -> None:
        """`rows` (ascending) into the ascending list at `at`."""
        first = len(self._rows) - at if self._descending else at  # where the block starts in the view
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._rows[at:at] = rows
        self.endInsertRows()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.layoutAboutToBeChanged.emit()
        before = {row[_ID]: self._view_row(i) for i, row in enumerate(self._rows)}
        self._column, self._descending = column, order == Qt.SortOrder.DescendingOrder
        self._rows.sort(key=self._key)  # stable: equal keys keep their order
        after = {row[_ID]: self._view_row(i) for i, row in enumerate(self._rows)}
        old = self.persistentIndexList()  # the selection, the current row: they follow their runs
        moved = {before[run_id]: after[run_id] for run_id in before}
        self.changePersistentIndexList(old, [self.index(moved[i.row()], i.column()) for i in old])
        self.layoutChanged.emit()

    def _view_row(self, position: int) -> int:
        return len(self._rows) - 1 - position if self._descending else position


class RunFilter(QSortFilterProxyModel):
    """The runs whose texts hold the filter's words (any case); sorting is the table's own."""

    def __init__(self, table: RunTable) -> None:
        super().__init__(table.parent())
        self.setSourceModel(table)
        self._table = table
        self._needle = ""

    def set_text(self, text: str) -> None:
        self.beginFilterChange()
        self._needle = text.lower()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802 (Qt's name)
        return not self._needle or self._table.matches(source_row, self._needle)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._table.sort(column, order)
