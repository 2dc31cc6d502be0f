"""ElideDelegate: a table column that elides its text its own way (a path in the middle,
keeping the file name) where the rest of the table elides at the right."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem


class ElideDelegate(QStyledItemDelegate):
    def __init__(self, mode: Qt.TextElideMode, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._mode = mode

    def initStyleOption(self, option: QStyleOptionViewItem,  # noqa: N802 (Qt's name)
                        index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = self._mode  # type: ignore[attr-defined]
