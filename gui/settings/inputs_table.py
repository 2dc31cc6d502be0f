"""InputsTable: the model's inputs as it declares them, and the shape to feed each.

Filled from the model's own listing (the probe reports it after load, so the first run
of a model fills the table); a user sets each unknown dimension in the last column. A
row left empty is fed the documented default, which the run then reports as assumed.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.probe.model.input_shapes import DEFAULTS_HELP, default_dims, format_dims
from tflaunch.core.run.model_facts import InputFacts

NAME, DTYPE, DECLARED, FEED = range(4)


class InputsTable(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Input", "Type", "Model's shape", "Feed (no batch)"])
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(FEED, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.AllEditTriggers)
        self.table.setFixedHeight(self.table.fontMetrics().lineSpacing() * 6 + 16)
        self.table.setToolTip("Shapes without the batch dimension, e.g. 224x224x3 or 128. "
                              f"Unknown dimensions left empty get defaults ({DEFAULTS_HELP}) and the "
                              "result says the shape was assumed.")
        self.note = QLabel("Run the model once to list its inputs, or add them by name.")
        self.note.setWordWrap(True)
        add = QPushButton("Add input")
        add.clicked.connect(lambda: self._add_row("", "", None, ""))
        self.remove = QPushButton("Remove")
        self.remove.clicked.connect(self._remove_rows)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.table)
        column.addWidget(self.note)
        column.addLayout(buttons)
        self.model: str | None = None  # whose inputs the declared rows are

    # -- the editor's get and put --------------------------------------------------------
    def shapes(self) -> dict[str, str]:
        out = {}
        for row in range(self.table.rowCount()):
            name, feed = self._text(row, NAME), self._text(row, FEED)
            if name and feed:
                out[name] = feed
        return out

    def set_shapes(self, shapes: dict[str, str]) -> None:
        for row in range(self.table.rowCount() - 1, -1, -1):  # user rows go; the model's stay
            if self._declared(row) is None:
                self.table.removeRow(row)
        listed = {self._text(r, NAME): r for r in range(self.table.rowCount())}
        for row in listed.values():
            self._set(row, FEED, "")
        for name, text in (shapes or {}).items():
            if name in listed:
                self._set(listed[name], FEED, text)
            else:
                self._add_row(name, "", None, text)

    # -- the model's listing ---------------------------------------------------------------
    def show_declared(self, model: str, inputs: Sequence[InputFacts]) -> None:
        """The inputs `model` declares (from its latest run); shapes already set are kept."""
        current = self.shapes()
        self.model = model
        self.table.setRowCount(0)
        for item in inputs:
            if item.shape is not None:
                self._add_row(item.name or "", item.dtype or "", list(item.shape), "")
        self.set_shapes(current)
        self.note.setText(f"Inputs of {model} as it declares them (? is unknown). An empty Feed cell gets "
                          "the default named in brackets, and the run says the shape was assumed."
                          if inputs else "This model lists no inputs.")

    def forget_declared(self) -> None:
        """Another model was chosen: its listing is not this one's."""
        if self.model is None:
            return
        current = self.shapes()
        self.model = None
        self.table.setRowCount(0)
        self.set_shapes(current)
        self.note.setText("Run the model once to list its inputs, or add them by name.")

    # -- helpers -----------------------------------------------------------------------------
    def _add_row(self, name: str, dtype: str, shape: list[int | None] | None, feed: str) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        declared = shape is not None
        declared_text = format_dims(shape[1:]) if shape else ""
        if shape and any(d is None for d in shape[1:]):
            declared_text += f" (default {format_dims(default_dims(shape, dtype))})"
        for col, text in ((NAME, name), (DTYPE, dtype), (DECLARED, declared_text)):
            item = QTableWidgetItem(text)
            if declared:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            if col == DECLARED:
                item.setData(Qt.ItemDataRole.UserRole, shape)
            self.table.setItem(row, col, item)
        self._set(row, FEED, feed)
        if not declared:
            self.table.setCurrentCell(row, NAME)

    def _remove_rows(self) -> None:
        for row in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            if self._declared(row) is None:
                self.table.removeRow(row)
            else:
                self._set(row, FEED, "")  # the model's own inputs stay listed; their shape is cleared

    def _declared(self, row: int) -> list[int | None] | None:
        item = self.table.item(row, DECLARED)
        value = item.data(Qt.ItemDataRole.UserRole) if item else None
        return value if isinstance(value, list) else None

    def _text(self, row: int, col: int) -> str:
        item = self.table.item(row, col)
        return item.text().strip() if item else ""

    def _set(self, row: int, col: int, text: str) -> None:
        item = self.table.item(row, col)
        if item is None:
            item = QTableWidgetItem()
            self.table.setItem(row, col, item)
        item.setText(text)
