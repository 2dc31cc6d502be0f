"""SettingsPanel: the form that makes a LaunchConfig, with the reason next to a bad setting.

The form is derived from vocabulary.SETTINGS: one editor per LaunchConfig field, in the
table's groups and order, labelled and explained from the table. config() and
set_config() go through those editors and nothing else.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from dataclasses import fields
from typing import Any, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.phases import normal_until
from tflaunch.core.report.subjects import own_config
from tflaunch.core.run.gpus.nvml import GpuInventory
from tflaunch.core.run.interpreters.interpreter import InterpreterInfo
from tflaunch.core.run.model_facts import InputFacts
from tflaunch.core.settings.config import LaunchConfig, Problem
from tflaunch.core.settings.vocabulary import BY_NAME, SAMPLE_MODELS, SETTINGS, Setting
from tflaunch.core.subject import BOTH, Subject
from tflaunch.core.units import format_bytes

from ..widgets import file_dialogs
from ..widgets.palette import error_style, keep_colours
from ..widgets.section import Section
from . import setting_editors as ed
from .inputs_table import InputsTable
from .tab_order import order_tabs

# Groups whose settings describe the subject itself (its model, command line, inputs, calls):
# there the other subject's rows are hidden, not greyed.
_SUBJECT_GROUPS = ("Subject", "Inference")
# What an empty text field stands for, where the setting's words do not say it.
_PLACEHOLDERS = {"signature": "serving_default", "imports": "my_layers  or  /path/to/layers.py, one per line"}


class SettingsPanel(QWidget):
    """Edits one LaunchConfig. Emits `python_changed` so the window can check it, and
    `runnable_changed` when the check's verdict decides whether a run can start."""

    python_changed = Signal(str)
    runnable_changed = Signal(bool, str)  # can a run start; if not, why (the check's words)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._errors: dict[str, QLabel] = {}
        self._forms: dict[str, QFormLayout] = {}
        self._gpu_boxes: list[QCheckBox] = []
        self.editors: dict[str, ed.Editor] = {}
        self.not_runnable = ""  # why a run cannot start with the chosen interpreter; "" when it can
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        groups: dict[str, QFormLayout] = {}
        for setting in SETTINGS:
            if setting.group not in groups:
                box = Section(setting.group)
                groups[setting.group] = QFormLayout(box)
                layout.addWidget(box)
            self._add(groups[setting.group], setting)
        layout.addStretch(1)
        # The subject's switch heads its group: what follows is the model's or the program's.
        self._forms["model"].insertRow(0, self.subject)
        self.set_recent_models([])
        self.set_gpus(GpuInventory((), None, "Looking for GPUs…"))
        self.set_config(LaunchConfig())  # every editor starts at the setting's default
        self.subject.currentIndexChanged.connect(lambda _: self._show_subject())
        self._order_tabs()
        keep_colours(self, self._recolour)

    def _order_tabs(self) -> None:
        """Tab follows the screen, top to bottom: the order the widgets were made in put the
        Subject switch, made with the program's row, 27th."""
        boxes = [child for child in self.children() if isinstance(child, QGroupBox)]  # in the order added
        forms = sorted(dict.fromkeys(self._forms.values()),
                       key=lambda form: boxes.index(cast(QGroupBox, form.parentWidget())))
        order_tabs(forms)

    def _recolour(self) -> None:
        """The reasons next to settings, in a red readable on the palette's window."""
        for label in [*self._errors.values(), self.python_status]:
            if label.styleSheet():
                label.setStyleSheet(error_style())

    # -- building ----------------------------------------------------------------------
    def _add(self, form: QFormLayout, setting: Setting) -> None:
        editor = self._make_editor(setting)
        editor.widget.setToolTip(setting.help)
        self.editors[setting.name] = editor
        self._forms[setting.name] = form
        if isinstance(editor.widget, QCheckBox) or setting.name in ("model", "program", "visible_gpus", "inputs"):
            form.addRow(editor.widget)
        else:
            form.addRow(setting.label, editor.widget)
        label = QLabel()
        label.setObjectName("fieldError")
        label.setWordWrap(True)
        label.setStyleSheet(error_style())
        self._errors[setting.name] = label
        form.addRow(label)
        # Shown and hidden only through its row (_place_errors): a label shown while the form
        # hides its row is laid out by nobody and lay over the fields as a blank 640x480 pane.
        form.setRowVisible(label, False)

    def _make_editor(self, setting: Setting) -> ed.Editor:
        """The setting's editor: made from its kind and words (setting_editors.editor_for), or
        by name for the few that need more than a value (a picker, a list of GPUs, a table)."""
        name = setting.name
        special = {"model": self._model_editor, "program": self._program_editor, "workdir": self._workdir_editor,
                   "python": self._python_editor, "visible_gpus": self._gpu_editor, "until": self._until_editor,
                   "inputs": self._inputs_editor}
        if name in special:
            return special[name]()
        editor = ed.editor_for(setting, _PLACEHOLDERS.get(name, ""))
        setattr(self, name, editor.widget)  # the widget by its setting's name, for focus and tests
        return editor

    def _until_editor(self) -> ed.Editor:
        """The points a run can be measured to, and mark:NAME for a mark of the program's own."""
        words = ed.words_editor([*BY_NAME["until"].choices, "mark:NAME"])
        self.until = words.widget
        return ed.Editor(words.widget, lambda: normal_until(str(words.get())), words.put)

    def _inputs_editor(self) -> ed.Editor:
        self.inputs_table = InputsTable()
        self.inputs = self.inputs_table
        return ed.Editor(self.inputs_table, self.inputs_table.shapes, self.inputs_table.set_shapes)

    def _model_editor(self) -> ed.Editor:
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.setMinimumContentsLength(18)
        self.model.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        browse_file = QPushButton("File…")
        browse_file.setToolTip("Choose a .keras or .h5 file")
        browse_file.clicked.connect(self.browse_model_file)
        browse_dir = QPushButton("SavedModel…")
        browse_dir.setToolTip("Choose a SavedModel folder (one with saved_model.pb)")
        browse_dir.clicked.connect(self.browse_model_dir)
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.model)
        buttons = QHBoxLayout()
        buttons.addWidget(browse_file)
        buttons.addWidget(browse_dir)
        column.addLayout(buttons)
        # The tooltip goes on the combo, where the pointer is.
        editor = ed.Editor(box, lambda: self.model.currentText().strip(), self.model.setCurrentText)
        self.model.currentTextChanged.connect(self._model_changed)
        self.model.setToolTip(BY_NAME["model"].help + " Drop a model onto the window to choose it.")
        return editor

    def _program_editor(self) -> ed.Editor:
        """The subject's switch (a model or your program) and the program's command line."""
        self.subject = QComboBox()
        self.subject.addItems(["Model: a file the probe loads and calls", "Program: your own command line"])
        self.subject.setToolTip("What a run measures. A program is observed as it really starts: its phases are "
                                "what it does (import, build or load, compile, data, first step...).")
        self.program = QLineEdit()
        self.program.setPlaceholderText("python train.py --epochs 1")
        self.program.setToolTip(BY_NAME["program"].help + " A bare python means the Interpreter below.")
        browse = QPushButton("Script…")
        browse.setToolTip("Choose a Python script: the line becomes python SCRIPT")
        browse.clicked.connect(self._browse_script)
        self._program_row = QWidget()
        row = QHBoxLayout(self._program_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.program, 1)
        row.addWidget(browse)
        box = self._program_row  # the switch goes first in the group (see __init__)

        def get() -> tuple[str, ...]:
            if self.subject.currentIndex() == 0:
                return ()
            try:
                return tuple(shlex.split(self.program.text()))
            except ValueError:  # an unclosed quote: input_problems() says so before any run
                return (self.program.text(),)

        def put(argv: tuple[str, ...]) -> None:
            if argv:
                self.program.setText(shlex.join(argv))
            self.subject.setCurrentIndex(1 if argv else 0)
            self._show_subject()

        return ed.Editor(box, get, put)

    def _workdir_editor(self) -> ed.Editor:
        self.workdir = QLineEdit()
        self.workdir.setPlaceholderText("the current folder")
        browse = QPushButton("…")
        browse.setFixedWidth(32)
        browse.setToolTip("Choose the folder the program starts in")
        browse.clicked.connect(self._browse_workdir)
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.workdir, 1)
        row.addWidget(browse)
        return ed.Editor(box, lambda: self.workdir.text().strip(), lambda v: self.workdir.setText(str(v or "")))

    @property
    def subject_type(self) -> Subject:
        return Subject.PROGRAM if self.subject.currentIndex() == 1 else Subject.MODEL

    @property
    def is_program(self) -> bool:
        return self.subject_type.is_program

    def _shown_for_subject(self, name: str) -> bool:
        """Whether the row is shown: a setting the subject does not read (Setting.read_by) is
        hidden where it describes the other subject (its Subject and Inference groups)."""
        setting = BY_NAME[name]
        return setting.reads(self.subject_type) or setting.group not in _SUBJECT_GROUPS

    def _show_subject(self) -> None:
        """The other subject's rows hidden; a setting of another group the subject does not
        read (a program's jit_compile: its own code decides it) greyed, with the reason."""
        subject = self.subject_type
        for setting in SETTINGS:
            if setting.read_by == BOTH:
                continue
            widget = self.editors[setting.name].widget
            if setting.group in _SUBJECT_GROUPS:
                self._forms[setting.name].setRowVisible(widget, setting.reads(subject))
                continue
            why = setting.why_unread(subject)
            widget.setEnabled(why is None)
            widget.setToolTip(setting.help + ("" if why is None else f"\nNot read by {subject.noun}: {why}."))
        self._place_errors()

    def _place_errors(self) -> None:
        """Each reason in its own row under its field, laid out by the form; none for a
        field the subject hides."""
        for name, label in self._errors.items():
            self._forms[name].setRowVisible(label, bool(label.text()) and self._shown_for_subject(name))

    def input_problems(self) -> list[Problem]:
        """What the form itself can tell is wrong before a LaunchConfig is made: a Program
        subject with no command line (it would run the model instead), or an unclosed quote."""
        if not self.is_program:
            return []
        text = self.program.text()
        if not text.strip():
            return [Problem("program", "Program is chosen but its command line is empty. Give it, for example "
                                       "python train.py --epochs 1, or choose Model to measure a model.")]
        try:
            shlex.split(text)
        except ValueError:
            quote = "'" if text.count("'") % 2 else '"'
            return [Problem("program", f"The command line has an unclosed quote ({quote}): close it, or "
                                       "escape it with a backslash.")]
        return []

    def use_program(self, argv: list[str]) -> None:
        """Measure this command line next (a script dropped on the window); none: the model."""
        self.editors["program"].put(tuple(argv))

    def _browse_script(self) -> None:
        path = file_dialogs.open_file(self, "script", "Choose a script", "Python (*.py);;All files (*)")
        if path:
            self.program.setText(shlex.join(["python", path]))

    def _browse_workdir(self) -> None:
        path = file_dialogs.open_folder(self, "workdir", "Choose the working folder")
        if path:
            self.workdir.setText(path)

    def _python_editor(self) -> ed.Editor:
        self.python = QLineEdit(sys.executable)
        self.python.editingFinished.connect(lambda: self.python_changed.emit(self.python.text()))
        browse = QPushButton("…")
        browse.setFixedWidth(32)
        browse.setToolTip("Choose a python executable")
        browse.clicked.connect(self._browse_python)
        self.python_status = QLabel("Checking…")
        self.python_status.setWordWrap(True)
        self.python_status.setTextFormat(Qt.TextFormat.PlainText)  # a traceback's <module> is text, not markup
        self.python_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.python, 1)
        row.addWidget(browse)
        column.addLayout(row)
        column.addWidget(self.python_status)

        def put(python: str) -> None:
            if self.python.text() != python:
                self.python.setText(python)
                self.python_changed.emit(python)

        return ed.Editor(box, lambda: self.python.text().strip(), put)

    def _gpu_editor(self) -> ed.Editor:
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        self.gpu_note = QLabel("Looking for GPUs…")
        self.gpu_note.setWordWrap(True)
        self._gpu_layout = QVBoxLayout()
        column.addWidget(self.gpu_note)
        column.addLayout(self._gpu_layout)
        self._visible: tuple[int, ...] | None = None

        def get() -> tuple[int, ...] | None:
            if not self._gpu_boxes:
                return self._visible  # none listed (yet): keep what was set
            if all(b.isChecked() for b in self._gpu_boxes):
                return None
            return tuple(i for i, b in enumerate(self._gpu_boxes) if b.isChecked())

        def put(visible: tuple[int, ...] | None) -> None:
            self._visible = visible
            for i, gpu_box in enumerate(self._gpu_boxes):
                gpu_box.setChecked(visible is None or i in visible)

        return ed.Editor(box, get, put)

    # -- reading and writing -----------------------------------------------------------
    def config(self) -> LaunchConfig:
        """What a run of the chosen subject measures: the other subject's hidden fields (a
        Working folder typed for a program, while a model is chosen) at their defaults, so
        they never reach a run, its record, a profile or a comparison."""
        return own_config(self.form_config())

    def form_config(self) -> LaunchConfig:
        """Every field as the form holds it, hidden ones too: kept between sessions."""
        values: dict[str, Any] = {f.name: self.editors[f.name].get() for f in fields(LaunchConfig)}
        return LaunchConfig(**values)

    def set_config(self, config: LaunchConfig) -> None:
        for f in fields(LaunchConfig):
            self.editors[f.name].put(getattr(config, f.name))

    def set_recent_models(self, recent: list[str]) -> None:
        current = self.model.currentText()
        self.model.clear()
        for path in recent:
            self.model.addItem(path)
        if recent:
            self.model.insertSeparator(self.model.count())
        for name, text in SAMPLE_MODELS.items():
            self.model.addItem(f"sample:{name}")
            self.model.setItemData(self.model.count() - 1, text, Qt.ItemDataRole.ToolTipRole)
        self.model.setCurrentText(current or "sample:mlp")

    def set_gpus(self, inventory: GpuInventory) -> None:
        visible = self.editors["visible_gpus"].get()
        for box in self._gpu_boxes:
            box.deleteLater()
        self._gpu_boxes = []
        for gpu in inventory.gpus:
            box = QCheckBox(f"GPU {gpu.index}: {gpu.name} ({format_bytes(gpu.memory_total)})")
            box.setToolTip(BY_NAME["visible_gpus"].help)
            self._gpu_layout.addWidget(box)
            self._gpu_boxes.append(box)
        self.editors["visible_gpus"].put(visible)
        self._order_tabs()  # the new boxes in their place in the Tab order, not at its end
        has_gpu = inventory.available
        self.gpu_note.setText(f"Driver {inventory.driver}" if has_gpu else f"No GPU: {inventory.reason}")
        # Settings only a GPU reads; NVTX ranges and the XLA cache act without one.
        for name in ("memory_growth", "memory_limit_mb", "allocator", "cudnn_autotune", "module_loading",
                     "cuda_cache"):
            widget = self.editors[name].widget
            widget.setEnabled(has_gpu)
            widget.setToolTip(widget.toolTip().split("\nDisabled:")[0]
                              + ("" if has_gpu else f"\nDisabled: {inventory.reason}"))

    def show_model_inputs(self, model: str, inputs: Sequence[InputFacts]) -> None:
        """What `model` declares as inputs (a run reported it); only while it is chosen."""
        if model == self.editors["model"].get():
            self.inputs_table.show_declared(model, inputs)

    def _model_changed(self, text: str) -> None:
        if self.inputs_table.model is not None and text.strip() != self.inputs_table.model:
            self.inputs_table.forget_declared()

    @property
    def runnable(self) -> bool:
        """Whether the interpreter check allows a run (until a check says otherwise, it does)."""
        return not self.not_runnable

    def set_interpreter_info(self, info: InterpreterInfo) -> None:
        """The check's verdict: its words under the field, what the interpreter wrote in the
        tooltip, and whether Run can start (runnable_changed)."""
        if info.python.strip() != self.python.text().strip():
            return  # a verdict on an interpreter no longer chosen
        self.python_status.setText(info.message)
        self.python_status.setToolTip(getattr(info, "detail", "") or "")
        self.python_status.setStyleSheet("" if info.ok else error_style())
        reason = "" if info.ok else info.message
        if reason != self.not_runnable:
            self.not_runnable = reason
            self.runnable_changed.emit(not reason, reason)

    def show_problems(self, problems: list[Problem]) -> None:
        by_field: dict[str, str] = {}
        for p in problems:
            by_field.setdefault(p.field, p.message)
        for field, label in self._errors.items():
            label.setText(by_field.get(field, ""))
        self._place_errors()

    # -- browsing ----------------------------------------------------------------------
    def browse_model_file(self) -> None:
        path = file_dialogs.open_file(self, "model", "Choose a model", "Keras models (*.keras *.h5 *.hdf5)")
        if path:
            self.model.setCurrentText(path)

    def browse_model_dir(self) -> None:
        path = file_dialogs.open_folder(self, "model", "Choose a SavedModel folder")
        if path:
            self.model.setCurrentText(path)

    def _browse_python(self) -> None:
        path = file_dialogs.open_file(self, "interpreter", "Choose a Python interpreter",
                                      "Python (python*);;All files (*)")
        if path:
            self.python.setText(path)
            self.python_changed.emit(path)

