"""Section: a group box with its title in bold, the fields in it in the box's own weight.

Fusion draws a group box's title in the box's font, and a bold box font would be inherited
by every field inside it. So the title alone is painted bold, measured in the bold font so
that the style makes its rectangle wide enough for it.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetrics, QPaintEvent
from PySide6.QtWidgets import QGroupBox, QStyle, QStyleOptionGroupBox, QStylePainter


class Section(QGroupBox):
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        # As QGroupBox paints itself, with the bold font for the title.
        painter = QStylePainter(self)
        option = QStyleOptionGroupBox()
        self.initStyleOption(option)
        bold = QFont(self.font())
        bold.setBold(True)
        option.fontMetrics = QFontMetrics(bold)
        painter.setFont(bold)
        painter.drawComplexControl(QStyle.ComplexControl.CC_GroupBox, option)
