"""after_first_paint: run something once a widget's first frame is on screen.

Work the first frame does not need (device discovery, starting helper processes) waits
for it, so the window appears as early as it can; the start-up benchmark reads the same
moment.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class _FirstPaint(QObject):
    def __init__(self, widget: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(widget)
        self._callback = callback
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            # The children paint in this same pass after their parent: the callback runs
            # once the whole frame is done.
            QTimer.singleShot(0, self._callback)
        return False


def after_first_paint(widget: QWidget, callback: Callable[[], None]) -> None:
    """Call `callback` once, from the event loop, after `widget` is first painted."""
    _FirstPaint(widget, callback)
