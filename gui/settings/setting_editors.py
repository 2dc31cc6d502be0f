"""One editor per kind of setting: a widget with a get and a set of the config's value.

The settings form (settings_panel.py) builds one editor for every field that
vocabulary.SETTINGS declares, so a new setting cannot be left out of the app; editor_for()
makes it from the setting's kind, choices, words, bounds and unit, and the form makes the
few that need more (the model picker, the GPU list, the inputs table) by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

from tflaunch.core.settings.setting import Kind, Setting


class Editor:
    """A widget that shows and edits one setting."""

    def __init__(self, widget: QWidget, get: Callable[[], Any], put: Callable[[Any], None]) -> None:
        self.widget, self.get, self.put = widget, get, put


def spin(low: int, high: int, *, special: str | None = None, suffix: str = "", step: int = 1) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setSuffix(suffix)
    box.setSingleStep(step)
    if special:
        box.setSpecialValueText(special)
    return box


def count_editor(low: int, high: int, special: str | None = None) -> Editor:
    box = spin(low, high, special=special)
    return Editor(box, box.value, box.setValue)


def optional_mib_editor(special: str = "no limit") -> Editor:
    """A positive number of MiB, or none (0 shows as `special`)."""
    box = spin(0, 1 << 20, special=special, suffix=" MiB", step=512)
    return Editor(box, lambda: box.value() or None, lambda v: box.setValue(v or 0))


def seconds_editor() -> Editor:
    box = QDoubleSpinBox()
    box.setRange(1, 24 * 3600)
    box.setDecimals(0)
    box.setSuffix(" s")
    return Editor(box, lambda: float(box.value()), lambda v: box.setValue(float(v)))


def bool_editor(text: str) -> Editor:
    box = QCheckBox(text)
    return Editor(box, box.isChecked, lambda v: box.setChecked(bool(v)))


def choice_editor(choices: dict[str, Any]) -> Editor:
    """A combo of labelled values; `choices` maps the label to the value. Its width is not its
    longest label's (the form must fit 1024 px); the list, open, shows each label whole."""
    box = QComboBox()
    for label, value in choices.items():
        box.addItem(label, value)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(16)
    box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)  # the form's width, not less
    box.view().setMinimumWidth(box.view().sizeHintForColumn(0) + 24)
    return Editor(box, box.currentData, lambda v: box.setCurrentIndex(max(0, box.findData(v))))


def environment_editor() -> Editor:
    """NAME=VALUE lines; a line without '=' is kept as a name with an empty value, which the
    launch check then names, rather than dropped without a word."""
    box = QPlainTextEdit()
    box.setPlaceholderText("NAME=VALUE, one per line")
    box.setTabChangesFocus(True)
    box.setFixedHeight(box.fontMetrics().lineSpacing() * 4 + 12)

    def get() -> dict[str, str]:
        env: dict[str, str] = {}
        # toRawText, not toPlainText: that one turns a non-breaking space into a space.
        for line in box.document().toRawText().replace("\u2029", "\n").split("\n"):
            if line.strip():
                name, _, value = line.partition("=")
                env[name.strip()] = value
        return env

    def put(env: dict[str, str]) -> None:
        box.setPlainText("\n".join(f"{k}={v}" for k, v in env.items()))

    return Editor(box, get, put)


def words_editor(words: list[str]) -> Editor:
    """An editable combo: one of `words`, or a word typed in (mark:NAME)."""
    box = QComboBox()
    box.setEditable(True)
    box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    box.addItems(words)
    return Editor(box, lambda: box.currentText().strip(), lambda v: box.setCurrentText(str(v or words[0])))


def text_editor(placeholder: str) -> Editor:
    box = QLineEdit()
    box.setPlaceholderText(placeholder)
    return Editor(box, lambda: box.text().strip(), lambda v: box.setText(str(v or "")))


def lines_editor(placeholder: str) -> Editor:
    """One value per line (modules to import, for example)."""
    box = QPlainTextEdit()
    box.setPlaceholderText(placeholder)
    box.setTabChangesFocus(True)
    box.setFixedHeight(box.fontMetrics().lineSpacing() * 3 + 12)

    def get() -> tuple[str, ...]:
        return tuple(line.strip() for line in box.toPlainText().splitlines() if line.strip())

    return Editor(box, get, lambda v: box.setPlainText("\n".join(v or ())))


def editor_for(setting: Setting, placeholder: str = "") -> Editor:
    """The editor the setting's kind calls for, its values in the words SETTINGS gives them."""
    kind, unset = setting.kind, setting.unset[0] if setting.unset else None
    if kind is Kind.SWITCH:
        return bool_editor(setting.label)
    if kind is Kind.TRISTATE:
        return choice_editor({unset or "default": None, "on": True, "off": False})
    if kind is Kind.CHOICE:
        default = {unset or "default": None} if setting.default is None else {}
        return choice_editor({**default, **{f"{value} ({words})": value for value, words in setting.choices.items()}})
    if kind is Kind.COUNT:
        low, high = setting.bounds or (0, 1 << 30)
        return count_editor(low, high, unset if setting.is_unset(low) else None)
    if kind is Kind.MIB:
        return optional_mib_editor(unset or "none")
    if kind is Kind.SECONDS:
        return seconds_editor()
    if kind is Kind.LIST:
        return lines_editor(placeholder)
    if kind is Kind.PAIRS:
        return environment_editor()
    if kind is Kind.TEXT:
        return text_editor(placeholder or (unset or ""))
    raise TypeError(f"no editor for a setting of kind {kind.value} ({setting.name}): make it by name")
