"""ElidedLabel: one line of text that gives way to the window instead of widening it.

A path in a label (the history file, the profiles folder) is as long as the user's home
folder makes it: a plain QLabel's minimum width is the whole line, which made the window
wider than a 1024 px screen. This one shows the line elided, a path in it keeping its file
name (elided_path), with the whole text in its tooltip, and asks for no more than a few
characters.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from .elide_delegate import elided_path

MIN_CHARACTERS = 12


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().minimumSizeHint()
        return QSize(self.fontMetrics().averageCharWidth() * MIN_CHARACTERS, hint.height())

    def elided_text(self) -> str:
        return elided_path(self.text(), self.fontMetrics(), self.contentsRect().width())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), int(self.alignment()) | int(Qt.TextFlag.TextSingleLine),
                         self.elided_text())
