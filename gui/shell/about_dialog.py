"""AboutDialog: what tflaunch is, which version, the files it keeps and where, and what it runs on.

The paths are the ones this window uses (a test's temporary folder, TFLAUNCH_DATA_DIR...),
each with a link to its folder, so a user can find, back up or share them; "Copy details"
puts the whole text on the clipboard for a bug report.
"""

from __future__ import annotations

import html
import platform
import sys
from importlib import metadata
from pathlib import Path

import pyqtgraph
import PySide6
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

WHAT_IT_IS = ("A launcher and start-up lab for TensorFlow: it starts a model's load in a separate process, "
              "shows each start-up phase (import, devices, load, trace, first inference) with its memory, "
              "compares runs, sweeps settings, and saves the settings that start fastest as a launch profile "
              "that the `tflaunch run` command applies to your own jobs.")


def _version() -> str:
    try:
        return metadata.version("tflaunch")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown (not installed)"


def _licence() -> str:
    try:
        meta = metadata.metadata("tflaunch")
    except metadata.PackageNotFoundError:
        return "see the project's README"
    found = (meta.get_all("License-Expression") or []) + (meta.get_all("License") or [])
    return found[0] if found else "see the project's README"


class AboutDialog(QDialog):
    def __init__(self, files: list[tuple[str, Path, str]], parent: QWidget | None = None) -> None:
        """`files`: (what it is, its path, what it holds) for each file or folder the app uses."""
        super().__init__(parent)
        self.setWindowTitle("About tflaunch")
        self.version = _version()
        self.licence = _licence()
        self.files = files
        self.runtime = [("Python", f"{platform.python_version()} ({sys.executable})"),
                        ("Qt", f"{qVersion()} (PySide6 {PySide6.__version__})"),
                        ("pyqtgraph", pyqtgraph.__version__)]
        text = QLabel(self._html())
        text.setObjectName("about_text")
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        text.linkActivated.connect(lambda url: QDesktopServices.openUrl(QUrl(url)))
        text.setMinimumWidth(560)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = buttons.addButton("Copy details", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.setToolTip("Copy this text, for a bug report")
        self.copy_button.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.details()))
        buttons.rejected.connect(self.reject)
        close = buttons.button(QDialogButtonBox.StandardButton.Close)
        close.setDefault(True)
        close.setFocus()
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(buttons)
        self.text = text

    def details(self) -> str:
        """The dialog's facts as plain text."""
        lines = [f"tflaunch {self.version}", "", "Files:"]
        lines += [f"  {what}: {path}" for what, path, _holds in self.files]
        lines += ["", "Runs on:"] + [f"  {name} {version}" for name, version in self.runtime]
        lines += ["", f"Licence: {self.licence}"]
        return "\n".join(lines)

    def _html(self) -> str:
        rows = "".join(
            f"<tr><td><b>{html.escape(what)}</b></td><td>{html.escape(str(path))}<br>"
            f"<small>{html.escape(holds)} · <a href='{QUrl.fromLocalFile(str(_folder(path))).toString()}'>"
            f"open folder</a></small></td></tr>"
            for what, path, holds in self.files)
        runtime = "".join(f"<tr><td><b>{name}</b></td><td>{html.escape(version)}</td></tr>"
                          for name, version in self.runtime)
        what = html.escape(WHAT_IT_IS).replace("`tflaunch run`", "<code>tflaunch run</code>")
        return (f"<h2>tflaunch {html.escape(self.version)}</h2><p>{what}</p>"
                f"<h3>Files it keeps</h3><table cellspacing='4'>{rows}</table>"
                f"<h3>Runs on</h3><table cellspacing='4'>{runtime}</table>"
                f"<p>Licence: {html.escape(self.licence)}.</p>")


def _folder(path: Path) -> Path:
    """The folder to open for `path`: itself, or the one that holds it (or would)."""
    return path if path.is_dir() else path.parent
