"""ProfileSaver: asks for a name and saves a profile, from runs, a comparison's best, a
sweep's winner or the doctor's verified remedies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QInputDialog, QWidget

from tflaunch.core.run.status import RunStatus
from tflaunch.core.store.history import HistoryError
from tflaunch.core.store.profiles import Profile, ProfileError, ProfileStore, evidence_from_runs, evidence_weakness
from tflaunch.core.store.trust import code_it_runs

if TYPE_CHECKING:
    from tflaunch.core.doctor.experiment import Diagnosis
    from tflaunch.core.run.record import RunRecord


class ProfileSaver(QObject):
    saved = Signal(str)  # profile name
    message = Signal(str)  # what happened, for the status bar

    def __init__(self, store: ProfileStore, parent_widget: QWidget) -> None:
        super().__init__(parent_widget)
        self.store = store
        self._parent = parent_widget

    def ask_name(self, title: str = "Save as profile", label: str = "Profile name:") -> str | None:
        name, ok = QInputDialog.getText(self._parent, title, label)
        return name.strip() if ok and name.strip() else None

    def ask_and_save_runs(self, runs: Sequence[RunRecord], baseline: Sequence[RunRecord] = (),
                          what: str | None = None) -> None:
        """`what`: which run the dialog says it saves, where the user may not see it (Ctrl+S
        pressed on another tab saves the Run tab's run)."""
        name = self.ask_name(label=f"Save {what} as the profile named:" if what else "Profile name:")
        if name:
            self.save_runs(name, runs, baseline)

    def ask_and_save_best(self, runs: Sequence[RunRecord], baseline: int) -> None:
        """The fastest successful run of a comparison besides its baseline, with the baseline."""
        contenders = [r for i, r in enumerate(runs) if i != baseline and r.status is RunStatus.OK]
        if not contenders:
            self.message.emit("No successful run besides the baseline to save.")
            return
        best = min(contenders, key=lambda r: r.time_to_ready or float("inf"))
        self.ask_and_save_runs([best], [runs[baseline]])

    def ask_and_save_diagnosis(self, diagnosis: Diagnosis) -> None:
        """The doctor's verified combination, saved like a sweep's winner; without one, the
        profile warm start was measured with (the doctor saved it for its advice), as a copy."""
        from tflaunch.core.doctor.report import doctor_evidence

        combined = diagnosis.combined if diagnosis.verified else None
        warm = diagnosis.warm_arm.profile if diagnosis.warm_arm is not None else None
        name = self.ask_name("Save the verified remedies as a profile" if combined is not None
                             else "Save the settings warm start was measured with as a profile")
        if name and combined is not None:
            self.save(lambda: Profile(name, combined, doctor_evidence(diagnosis)))
        elif name and warm:
            self.save(lambda: replace(self.store.load(warm), name=name))

    def save_runs(self, name: str, runs: Sequence[RunRecord], baseline: Sequence[RunRecord] = ()) -> bool:
        """Store runs' settings as a profile, with them as evidence (runs of one kind: an
        anatomy run's or a warm server's start is no figure of the others')."""
        kinds = list(dict.fromkeys(r.kind for r in runs))
        if len(kinds) > 1:
            self.message.emit(f"Profile not saved: the runs were measured in different ways "
                              f"({', '.join(k.words for k in kinds)}), and evidence pools runs of one kind. "
                              "Select runs of one kind.")
            return False
        return self.save(lambda: Profile(name, runs[-1].config, evidence_from_runs(runs, baseline)))

    def save(self, make_profile: Callable[[], Profile], *, trusted: bool = True) -> bool:
        """Build and save a profile; a problem is said, never raised. `trusted`: the user's own
        (a run or sweep of theirs); False for settings that came from a shared folder, which
        are saved as an import: used only once the user has seen what they run and said yes."""
        try:
            profile = make_profile()
            path = self.store.save(profile, trusted=trusted)
        except (ProfileError, OSError, ValueError, HistoryError) as exc:  # a sweep's runs are read back
            self.message.emit(f"Profile not saved: {exc}")
            return False
        self.saved.emit(profile.name)
        weakness = evidence_weakness(profile.evidence)
        weak = f" — weak evidence: {weakness}" if weakness else ""
        runs = code_it_runs(profile.config) if not trusted else []
        untrusted = (f" — it runs code ({len(runs)} item{'s' if len(runs) != 1 else ''}): trust it in the Profiles "
                     "tab after reading what it runs" if runs else "")
        self.message.emit(f"Saved profile {profile.name} to {path}{weak}{untrusted}")
        return True
