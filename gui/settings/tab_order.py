"""Tab order of a form as it reads on screen: row by row, each row's widgets in the order
they were made (a field before its buttons)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QAbstractSpinBox, QComboBox, QFormLayout, QWidget

_ROLES = (QFormLayout.ItemRole.LabelRole, QFormLayout.ItemRole.FieldRole, QFormLayout.ItemRole.SpanningRole)


def order_tabs(forms: Sequence[QFormLayout]) -> None:
    """Chain Tab through the forms' rows, the forms in the order given (top to bottom)."""
    chain: list[QWidget] = []
    for form in forms:
        for row in range(form.rowCount()):
            for role in _ROLES:
                item = form.itemAt(row, role)
                widget = item.widget() if item is not None else None
                if widget is not None:
                    chain += focusable(widget)
    chain = list(dict.fromkeys(chain))  # a row's widget answers for its field and spanning roles
    for first, second in pairwise(chain):
        QWidget.setTabOrder(first, second)


def focusable(widget: QWidget) -> list[QWidget]:
    """The widgets Tab stops at inside `widget`, in the order they were made; not the parts
    of a combo box, spin box or table, nor a combo box's popup (a window of its own)."""
    found: list[QWidget] = []
    for candidate in [widget, *widget.findChildren(QWidget)]:
        if not candidate.focusPolicy() & Qt.FocusPolicy.TabFocus or candidate.window() is not widget.window():
            continue
        if any(isinstance(w, (QComboBox, QAbstractSpinBox, QAbstractItemView)) and w.isAncestorOf(candidate)
               for w in found):
            continue
        found.append(candidate)
    return found
