"""DockRoom: the bottom docks take room only as they hold something.

A fresh session's run list is empty; at its full height it took 160 px from every tab at
1024x700 (Compare's table showed 2.5 rows beside it). Until its first run the Runs dock keeps
the height of its header and one row, and the tabs get the rest; each run then gives it a
row more, up to its room (one run in a 160 px dock left some 80 px of empty rows). A height
the user gave it by dragging is theirs: the dock grows no more.

The Log, tabified with it, gets room for LOG_LINES lines when its tab is raised (in a
one-run dock it showed its search bar and one line), and the runs their height back after.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTableWidget

from ..run.log_pane import LogPane

ROOM = 160  # the Runs dock's area at most (with the tab bar of the docks tabified with it)
SLACK = 4  # px: a dock laid out within this of the height given still has it (not dragged)
LOG_LINES = 6  # the Log's lines in view when its tab is raised


class DockRoom(QObject):
    def __init__(self, window: QMainWindow, dock: QDockWidget, table: QTableWidget,
                 log: QDockWidget | None = None) -> None:
        super().__init__(window)
        self._window, self._dock, self._table = window, dock, table
        self._given: int | None = None  # the height it was laid out at when last given one
        self._base: int | None = None  # its laid-out height with one row, the empty dock's
        self._asked = 0
        # resizeDocks sizes the dock's area, which holds the tab bar of the docks tabified with
        # it too: what the area holds besides the dock, learned from how the layout came out.
        self._extra = 0
        self._retried = False
        table.model().rowsInserted.connect(lambda *_: QTimer.singleShot(0, self, self._grow))  # once laid out
        self._for_log = False
        if log is not None:
            log.visibilityChanged.connect(
                lambda shown: QTimer.singleShot(0, self, lambda: self._log_raised(log, shown)))

    def empty_height(self) -> int:
        """The dock's title, the table's header and one (empty) row."""
        title = self._dock.style().pixelMetric(self._dock.style().PixelMetric.PM_TitleBarHeight)
        return self._table_height() + title

    def _table_height(self) -> int:
        table = self._table
        rows = table.horizontalHeader().sizeHint().height() + table.verticalHeader().defaultSectionSize()
        return rows + 2 * table.frameWidth()

    def wanted(self) -> int:
        """The dock's own height for every run's row (its area is held to ROOM)."""
        more = max(self._table.rowCount() - 1, 0) * self._table.verticalHeader().defaultSectionSize()
        return (self._base or self.empty_height()) + more

    def fit(self) -> None:
        """Applied once the window is shown (docks take what the central widget leaves until then)."""
        QTimer.singleShot(0, self, self._fit)

    def _fit(self) -> None:
        # Below the scroll area's own minimum (some 70 px of empty rows), down to one row.
        self._table.setMinimumHeight(self._table_height())
        self._give(self.wanted())

    def _log_raised(self, log: QDockWidget, shown: bool) -> None:
        """The Log's tab raised: room for its lines; lowered: the runs' height back."""
        pane = log.widget()
        if shown and isinstance(pane, LogPane):
            title = log.style().pixelMetric(log.style().PixelMetric.PM_TitleBarHeight)
            need = title + pane.height_for_lines(LOG_LINES)
            if log.height() < need - SLACK:
                self._for_log = True
                self._window.resizeDocks([log], [need + self._extra], Qt.Orientation.Vertical)
                QTimer.singleShot(0, self, lambda: self._log_laid_out(log, need))
        elif not shown and self._for_log and not self._window.isHidden():
            self._for_log = False
            self._give(self.wanted())

    def _log_laid_out(self, log: QDockWidget, need: int) -> None:
        # The area holds the docks' tab bar too: once more, with what the dock came out short.
        short = need - log.height()
        if short > SLACK:
            self._window.resizeDocks([log], [need + short + self._extra], Qt.Orientation.Vertical)

    def _grow(self) -> None:
        height = self._dock.height()
        room_left = height + self._extra < ROOM - SLACK
        if height < self.wanted() and room_left and (self._given is None or abs(height - self._given) <= SLACK):
            self._give(self.wanted())

    def _give(self, height: int) -> None:
        self._asked = height
        self._window.resizeDocks([self._dock], [min(height + self._extra, ROOM)], Qt.Orientation.Vertical)
        QTimer.singleShot(0, self, self._laid_out)  # the window lays docks out later, within its limits

    def _laid_out(self) -> None:
        short = self._asked - self._dock.height()
        if short > SLACK and not self._retried and self._asked + self._extra < ROOM:
            # The area held more than the dock: once more, with that.
            self._extra += short
            self._retried = True
            self._give(self._asked)
            return
        self._retried = False
        self._given = self._dock.height()
        if self._base is None:
            self._base = self._given
