"""WrappingLabel: a word-wrapped label that asks its layout for every line it needs.

Layouts size a word-wrapped QLabel from its size hint, which is computed for a width it
may not get; in a splitter the label then got one line for two and was cut at the top and
the bottom. This label keeps its minimum height at what its text needs at its width.
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget


class WrappingLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit()

    def _fit(self) -> None:
        if self.width() > 0:
            needed = self.heightForWidth(self.width())
            if needed > 0 and needed != self.minimumHeight():
                self.setMinimumHeight(needed)
