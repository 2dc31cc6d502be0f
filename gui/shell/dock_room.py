"""DockRoom: the bottom docks take room only once they hold something.

A fresh session's run list is empty; at its full height it took 160 px from every tab at
1024x700 (Compare's table showed 2.5 rows beside it). Until its first run the Runs dock keeps
the height of its header and one row, and the tabs get the rest; the first run gives it
back its room.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTableWidget

ROOM = 160  # the Runs dock's height once it lists runs


class DockRoom(QObject):
    def __init__(self, window: QMainWindow, dock: QDockWidget, table: QTableWidget) -> None:
        super().__init__(window)
        self._window, self._dock, self._table = window, dock, table
        table.model().rowsInserted.connect(self._on_first_row)

    def empty_height(self) -> int:
        """The dock's title, the table's header and one (empty) row."""
        title = self._dock.style().pixelMetric(self._dock.style().PixelMetric.PM_TitleBarHeight)
        return self._table_height() + title

    def _table_height(self) -> int:
        table = self._table
        rows = table.horizontalHeader().sizeHint().height() + table.verticalHeader().defaultSectionSize()
        return rows + 2 * table.frameWidth()

    def fit(self) -> None:
        """Applied once the window is shown (docks take what the central widget leaves until then)."""
        QTimer.singleShot(0, self, self._fit)

    def _fit(self) -> None:
        if self._table.rowCount() == 0:
            # Below the scroll area's own minimum (some 70 px of empty rows), down to one row.
            self._table.setMinimumHeight(self._table_height())
            self._window.resizeDocks([self._dock], [self.empty_height()], Qt.Orientation.Vertical)

    def _on_first_row(self) -> None:
        self._table.model().rowsInserted.disconnect(self._on_first_row)
        QTimer.singleShot(0, self, self._grow)  # once the row is laid out

    def _grow(self) -> None:
        if self._dock.height() < ROOM:
            self._window.resizeDocks([self._dock], [ROOM], Qt.Orientation.Vertical)
