"""The mouse wheel scrolls the form; it changes a setting only in the control that has focus.

A user scrolling a long settings panel with the pointer passing over a combo box or a spin
box would otherwise change that setting without noticing (Log level turned to "3: errors
hidden too", trials per setting 5 -> 4), and the next run would use it. So, application-
wide: such a control takes focus only by click or Tab (not by the wheel), and a wheel event
over one without focus goes to the scroll area around it instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QDial, QSlider, QWidget

# Not QScrollBar: a scroll area hands its wheel events to its scroll bars.
GUARDED = (QAbstractSpinBox, QComboBox, QSlider, QDial)


class WheelGuard(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.aside = 0  # builds it stands aside for (stand_aside); installed again at 0
        self.built_aside: list[QWidget] = []  # their roots, whose controls it guards then

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind not in (QEvent.Type.Wheel, QEvent.Type.Polish) or not isinstance(watched, GUARDED):
            return False
        if kind == QEvent.Type.Polish:
            _no_wheel_focus(watched)
            return False
        if watched.hasFocus() or _inside_popup(watched):
            return False
        area = scroll_area_of(watched)
        if area is not None:
            QCoreApplication.sendEvent(area.viewport(), event)
        return True  # never the control's own wheelEvent while it has no focus


def _no_wheel_focus(widget: QWidget) -> None:
    if widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


def scroll_area_of(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


def _inside_popup(widget: QWidget) -> bool:
    return widget.window().windowType() == Qt.WindowType.Popup


def install(app: QApplication) -> None:
    """Once per application (a second filter would do the same work twice)."""
    if app.property("tflaunch-wheel-guard"):
        return
    guard = WheelGuard(app)
    guard.setObjectName("tflaunch-wheel-guard")
    app.installEventFilter(guard)
    app.setProperty("tflaunch-wheel-guard", True)


def stand_aside(root: QWidget) -> Callable[[], None]:
    """The guard stands aside while `root` builds (and first paints) what it holds: an
    application-wide Python filter sees every event, and a build sends thousands (it made
    the main window's construction 40 % slower and its first paint 10 ms). Returns what
    ends this build's part in it (once): when no build is left, the guard is back and
    guards the controls built inside the roots meanwhile."""
    app = QApplication.instance()
    guard = app.findChild(WheelGuard, "tflaunch-wheel-guard") if app is not None else None
    if app is None or guard is None:
        return lambda: None
    if not guard.aside:
        app.removeEventFilter(guard)
    guard.aside += 1
    guard.built_aside.append(root)
    ended = False

    def resume() -> None:
        nonlocal ended
        if ended:
            return
        ended = True
        guard.aside -= 1
        if guard.aside:
            return
        app.installEventFilter(guard)
        roots, guard.built_aside = guard.built_aside, []
        for built in roots:
            if not shiboken6.isValid(built):  # deleted meanwhile
                continue
            # Not allWidgets(): it holds widgets half-way through their destructors.
            for widget in built.findChildren(QWidget):  # their Polish events passed unseen
                if isinstance(widget, GUARDED):
                    _no_wheel_focus(widget)

    return resume


@contextmanager
def paused(root: QWidget) -> Iterator[None]:
    """`stand_aside` for the length of a `with` block."""
    resume = stand_aside(root)
    try:
        yield
    finally:
        resume()
