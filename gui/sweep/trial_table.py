"""TrialTable: where each trial of a cluster sweep stands (pending, running, done, failed,
cancelled, lost), its state in the palette's colour and the reason beside it."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from tflaunch.core.cluster.status import TrialState

from ..widgets.palette import STATE_COLORS, readable

HEADER = ("Trial", "Node type", "Setting", "State", "Detail")
# A trial's state in the colours runs and phases use: lost asks for action as failed does,
# but nothing in it failed, so it reads as cancelled's amber.
COLOURS = {"pending": STATE_COLORS["waiting"], "running": STATE_COLORS["running"], "done": STATE_COLORS["done"],
           "failed": STATE_COLORS["failed"], "cancelled": STATE_COLORS["cancelled"],
           "lost": STATE_COLORS["cancelled"]}


class TrialTable(QTableWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(HEADER), parent)
        self.setHorizontalHeaderLabels(HEADER)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setWordWrap(False)
        columns = self.horizontalHeader()
        columns.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        columns.setStretchLastSection(True)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)  # compact: more rows in view
        # Three whole rows at least, none cut in half when the results below take the rest.
        self.setMinimumHeight(self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
                              + 3 * self.verticalHeader().defaultSectionSize())
        self._states: list[TrialState] = []

    def show_states(self, states: Sequence[TrialState]) -> None:
        """Every trial in index order; colours are the palette's at the time of the call."""
        self._states = list(states)
        self.setRowCount(len(states))
        for row, state in enumerate(states):
            colour = readable(COLOURS.get(state.state, STATE_COLORS["waiting"]))
            for col, text in enumerate((str(state.index), state.node_type, state.candidate, state.state,
                                        state.detail)):
                item = QTableWidgetItem(text)
                if col == 0:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == 3:
                    item.setForeground(colour)
                if col == 4 and text:
                    item.setToolTip(text)  # a failure's reason can be long: whole in the tooltip
                self.setItem(row, col, item)

    def recolour(self) -> None:
        self.show_states(self._states)

    def state_of(self, row: int) -> str:
        item = self.item(row, 3)
        return item.text() if item is not None else ""
