"""ScriptDialog: which script to launch with the current settings, and its arguments."""

from __future__ import annotations

import shlex
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from ..widgets import file_dialogs
from ..widgets.palette import error_style


class ScriptDialog(QDialog):
    def __init__(self, python: str, parent: QWidget | None = None,
                 remembered: tuple[str, str, bool] = ("", "", False)) -> None:
        """`remembered`: the last launch's script, arguments and Warm choice, offered again."""
        super().__init__(parent)
        self.setWindowTitle("Launch a script with these settings")
        self.python = python
        self.script = QLineEdit()
        self.script.setPlaceholderText("train.py")
        browse = QPushButton("…")
        browse.setToolTip("Choose the script")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.script, 1)
        row.addWidget(browse)
        self.arguments = QLineEdit()
        self.arguments.setPlaceholderText("--epochs 3")
        self.warm = QCheckBox("Warm launch: skip import tensorflow")
        self.warm.setToolTip("Fork the script from a warm server of this interpreter that has already imported "
                             "TensorFlow and Keras (started on the first warm launch, ended after 10 idle minutes "
                             "or with the app). The script gets its own arguments, folder, environment, output and "
                             "exit code; when forking is not safe it starts cold and the Log says why.")
        self.error = QLabel()
        self.error.setStyleSheet(error_style())
        self.note = note = QLabel(
            f"Runs with {python} to its end, as tflaunch run --profile does, under the settings panel's "
            "settings (environment settings are set before it starts, tf.config settings the moment it "
            "imports TensorFlow; the script itself is not changed). Measured: its phases as they happen "
            "(import, build, first step…), its steady steps and its memory, from its start to its exit. "
            "Its output goes to the Log; the settings panel is left as it is.")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Launch")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Script", row)
        form.addRow("Arguments", self.arguments)
        form.addRow(self.warm)
        form.addRow(note)
        form.addRow(self.error)
        form.addRow(buttons)
        self.resize(560, self.sizeHint().height())
        script, arguments, warm = remembered
        self.script.setText(script)
        self.arguments.setText(arguments)
        self.warm.setChecked(warm)

    def argv(self) -> list[str] | None:
        """The command line, or None with the reason shown when the input cannot be used."""
        script = self.script.text().strip()
        if not script or not Path(script).is_file():
            self.error.setText(f"The script {script or '(none)'} does not exist. Choose a Python file.")
            return None
        try:
            extra = shlex.split(self.arguments.text())
        except ValueError as exc:
            self.error.setText(f"The arguments cannot be read: {exc}.")
            return None
        return [self.python, script, *extra]

    def remembered(self) -> tuple[str, str, bool]:
        """What the next launch offers again."""
        return self.script.text().strip(), self.arguments.text(), self.warm.isChecked()

    def _accept(self) -> None:
        if self.argv() is not None:
            self.accept()

    def _browse(self) -> None:
        path = file_dialogs.open_file(self, "script", "Choose a script", "Python (*.py);;All files (*)")
        if path:
            self.script.setText(path)
