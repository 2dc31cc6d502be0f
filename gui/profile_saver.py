"""ProfileSaver: asks for a name and saves a profile, from runs or a sweep's winner."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QInputDialog, QWidget

from tflaunch.core.run.record import RunRecord
from tflaunch.core.store.history import HistoryError
from tflaunch.core.store.profiles import Profile, ProfileError, ProfileStore, evidence_from_runs


class ProfileSaver(QObject):
    saved = Signal(str)  # profile name
    message = Signal(str)  # what happened, for the status bar

    def __init__(self, store: ProfileStore, parent_widget: QWidget) -> None:
        super().__init__(parent_widget)
        self.store = store
        self._parent = parent_widget

    def ask_name(self, title: str = "Save as profile") -> str | None:
        name, ok = QInputDialog.getText(self._parent, title, "Profile name:")
        return name.strip() if ok and name.strip() else None

    def ask_and_save_runs(self, runs: Sequence[RunRecord], baseline: Sequence[RunRecord] = ()) -> None:
        name = self.ask_name()
        if name:
            self.save_runs(name, runs, baseline)

    def save_runs(self, name: str, runs: Sequence[RunRecord], baseline: Sequence[RunRecord] = ()) -> bool:
        """Store runs' settings as a profile, with them as evidence."""
        return self.save(lambda: Profile(name, runs[-1].config, evidence_from_runs(runs, baseline)))

    def save(self, make_profile: Callable[[], Profile]) -> bool:
        """Build and save a profile; a problem is said, never raised."""
        try:
            profile = make_profile()
            path = self.store.save(profile)
        except (ProfileError, OSError, ValueError, HistoryError) as exc:  # a sweep's runs are read back
            self.message.emit(f"Profile not saved: {exc}")
            return False
        self.saved.emit(profile.name)
        self.message.emit(f"Saved profile {profile.name} to {path}")
        return True
