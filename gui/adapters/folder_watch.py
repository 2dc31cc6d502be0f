"""FolderWatch: tells, once things settle, that files in a folder changed on disk.

Another process (a colleague's sync, `tflaunch profiles`, an editor) may add, edit or
remove files while the app shows them. Qt's watcher tells a folder's entries changing
(added, removed, replaced by an atomic save) and a watched file's content changing (an
editor writing in place), one signal per step: several steps of one save are told once,
after DEBOUNCE_MS of quiet.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

DEBOUNCE_MS = 250


class FolderWatch(QObject):
    changed = Signal()

    def __init__(self, folder: Path, pattern: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folder = folder
        self.pattern = pattern
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._on_change)
        self._watcher.fileChanged.connect(self._on_change)
        self._quiet = QTimer(self)
        self._quiet.setSingleShot(True)
        self._quiet.setInterval(DEBOUNCE_MS)
        self._quiet.timeout.connect(self._settled)
        self.rearm()

    def rearm(self) -> None:
        """Watch the folder and its files as they are now (a file replaced by an atomic save
        is a new file; a folder not made yet is watched for through its nearest existing
        ancestor, which tells when the path towards it is made)."""
        watched = self._watcher.directories() + self._watcher.files()
        if watched:
            self._watcher.removePaths(watched)
        if self.folder.is_dir():
            paths = [str(self.folder), *(str(p) for p in sorted(self.folder.glob(self.pattern)))]
        else:
            ancestor = next((p for p in self.folder.parents if p.is_dir()), None)
            paths = [str(ancestor)] if ancestor is not None else []
        if paths:
            self._watcher.addPaths(paths)

    def watched(self) -> list[str]:
        return self._watcher.directories() + self._watcher.files()

    def _on_change(self, _path: str) -> None:
        self._quiet.start()  # restarted by each step of the same change

    def _settled(self) -> None:
        self.rearm()
        self.changed.emit()
