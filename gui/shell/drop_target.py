"""Files dropped onto the window: a model becomes the Run tab's model, a Python script its
program (python SCRIPT, in the script's folder). A mixin of the main window, which has the
panel and the status bar it needs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from ..settings.settings_panel import SettingsPanel


def _one_local_path(mime: QMimeData) -> Path | None:
    urls = mime.urls()
    return Path(urls[0].toLocalFile()) if len(urls) == 1 and urls[0].isLocalFile() else None


class DropTarget:
    panel: SettingsPanel

    def say(self, message: str) -> None:
        raise NotImplementedError  # the window's status bar

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt's name)
        if _one_local_path(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt's name)
        path = _one_local_path(event.mimeData())
        if path is None:
            return
        panel = self.panel
        if path.suffix == ".py" and path.is_file():
            panel.use_program(["python", path.name])
            panel.workdir.setText(str(path.parent))
            self.say(f"Program: python {path.name} in {path.parent}")
        else:
            panel.use_program([])  # the subject is a model again
            panel.model.setCurrentText(str(path))
            self.say(f"Model: {path}")
        panel.show_problems(panel.config().validate(check_model=not panel.is_program))
        event.acceptProposedAction()
