"""Table columns that elide their text their own way where the rest of the table elides at
the right: ElideDelegate in a mode of Qt's, PathElideDelegate keeping a path's file name.

A model path elided by Qt in the middle kept a few letters of each end ("/tmp…eras"), which
names neither the folder nor the file. elided_path() takes whole folders out of the middle
of the path first ("/tmp/some/…/path/model.keras", "/tmp/…/model.keras", "…/model.keras")
and shortens the file name itself only when nothing else is left to take ("…el.keras").
"""

from __future__ import annotations

import re

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontMetrics, QPainter
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

ELLIPSIS = "…"
_LABEL = re.compile(r"[a-z]+: ")  # "script: /home/me/train.py"
_TOKEN = re.compile(r"\S+")


def _path_span(text: str) -> tuple[int, int] | None:
    """Where the path is in `text`: all of it after a label ("script: ") when it starts with
    one (spaces and all); in a command line ("python proj/train.py --epochs 3"), the first
    argument with a folder. None without a folder."""
    label = _LABEL.match(text)
    start = label.end() if label else 0
    rest = text[start:]
    if "/" not in rest:
        return None
    if " " not in rest[:rest.index("/")]:  # the text is a path from here on
        return start, len(text)
    token = next(m for m in _TOKEN.finditer(rest) if "/" in m.group())
    return start + token.start(), start + token.end()


def _folders(folder: str) -> list[str]:
    """A folder's parts, the root kept with the first ("/tmp", "some", "long")."""
    parts = folder.split("/")
    if len(parts) > 1 and parts[0] == "":  # an absolute path
        parts = [f"/{parts[1]}", *parts[2:]]
    return [p for p in parts if p]


def elided_path(text: str, metrics: QFontMetrics, width: int) -> str:
    """`text` as it fits in `width` pixels: whole, or its path's folders taken out of the
    middle, then the words after the path, then what comes before it, then the file name's
    beginning, in that order; a text without a path is elided in the middle."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    span = _path_span(text)
    if span is None:
        return metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, width)
    before, path, after = text[:span[0]], text[span[0]:span[1]], text[span[1]:]
    stripped = path.rstrip("/") or path
    folder, _, name = stripped.rpartition("/")
    folders = _folders(folder)
    for kept in range(len(folders) - 1, -1, -1):  # fewer folders each time, from the middle out
        first = (kept + 1) // 2
        shown = "/".join([*folders[:first], ELLIPSIS, *folders[len(folders) - (kept - first):]])
        candidate = f"{before}{shown}/{name}{after}"
        if metrics.horizontalAdvance(candidate) <= width:
            return candidate
    for head in (f"{before}{ELLIPSIS}/{name}", f"{ELLIPSIS}/{name}"):
        if not after and metrics.horizontalAdvance(head) <= width:
            return head
        if after and metrics.horizontalAdvance(head + ELLIPSIS) <= width:
            return metrics.elidedText(head + after, Qt.TextElideMode.ElideRight, width)
    # The file name's end: its type, and that something came before it.
    return next((tail for i in range(len(name)) if metrics.horizontalAdvance(tail := ELLIPSIS + name[i:]) <= width),
                ELLIPSIS if metrics.horizontalAdvance(ELLIPSIS) <= width else "")


class ElideDelegate(QStyledItemDelegate):
    def __init__(self, mode: Qt.TextElideMode, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._mode = mode

    def initStyleOption(self, option: QStyleOptionViewItem,  # noqa: N802 (Qt's name)
                        index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = self._mode  # type: ignore[attr-defined]


class PathElideDelegate(QStyledItemDelegate):
    """A column of paths and command lines (the runs' subjects) elided by elided_path()."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        widget = item.widget  # type: ignore[attr-defined]
        style = widget.style() if widget is not None else QApplication.style()
        # As Qt lays out a cell's text: a margin each side of it.
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        # Less one pixel each side, or Qt cut the fitted text once more at its right end.
        item.text = elided_path(item.text, item.fontMetrics, item.rect.width() - 2 * margin - 2)  # type: ignore[attr-defined]
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, widget)
