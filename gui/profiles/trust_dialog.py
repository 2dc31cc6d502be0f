"""TrustDialog: what a shared profile would run, shown before the user lets it run.

The list comes from core (code_it_runs), the file's text is the exact bytes that are
accepted: if the file changes after the dialog was shown, nothing is accepted. Both are
plain text with every hidden character made visible (core.safe_text): Qt would otherwise
take a value with markup as rich text, and a comment opened in one value hides every line
after it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from tflaunch.core.safe_text import shown, shown_lines


class TrustDialog(QMessageBox):
    def __init__(self, name: str, code: list[str], file_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle("Accept what this profile runs?")
        self.setTextFormat(Qt.TextFormat.PlainText)  # the informative text follows this format too
        self.setText(f"The profile {shown(name, 80)} would run code on this computer. Apply it only if you know "
                     "and accept every item:")
        self.setInformativeText("\n".join(f"• {shown(line, 2000)}" for line in code))
        self.setDetailedText(shown_lines(file_text))  # the whole file, under "Show Details…"
        self.accept_button = self.addButton("Accept and apply", QMessageBox.ButtonRole.AcceptRole)
        cancel = self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(cancel)  # Enter must not run a stranger's code
        self.setEscapeButton(cancel)

    def accepted_code(self) -> bool:
        """Show the dialog; True if the user accepted."""
        self.exec()
        return self.clickedButton() is self.accept_button
