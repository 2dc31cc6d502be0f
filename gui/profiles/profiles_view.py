"""ProfilesView: saved launch profiles; apply one, manage them, diff two.

The list follows the profiles folder: files another process adds, edits or removes show
within a moment, the selection kept.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QInputDialog,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.report.review import Review, profile_review
from tflaunch.core.safe_text import shown, shown_lines
from tflaunch.core.store.model_code import model_details
from tflaunch.core.store.profile_subject import measured_on
from tflaunch.core.store.profiles import ProfileError, ProfileStore, describe_evidence, diff, weak_evidence

from ..adapters.folder_watch import FolderWatch
from ..widgets import file_dialogs
from ..widgets.elided_label import ElidedLabel
from ..widgets.palette import STATE_COLORS, STATUS_COLORS
from ..widgets.text_roles import caption
from .trust_dialog import TrustDialog


class ProfilesView(QWidget):
    apply_requested = Signal(object)  # Profile: its settings, applied as its subject reads them

    def __init__(self, store: ProfileStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.itemSelectionChanged.connect(self._on_selection)
        self.list.itemDoubleClicked.connect(lambda _item: self.apply_selected())
        self.detail = QTextBrowser()
        self.detail.setOpenLinks(False)
        self.buttons: dict[str, QPushButton] = {}
        bar = QHBoxLayout()
        for name, tip, slot in (
            ("Apply", "Fill the settings panel with this profile (double-click)", self.apply_selected),
            ("Rename…", "Give the profile another name", self.rename_selected),
            ("Duplicate…", "Copy the profile under a new name", self.duplicate_selected),
            ("Delete", "Delete the profile file", self.delete_selected),
            ("Diff", "Show what differs between two selected profiles", self.diff_selected),
            ("Import…", "Add a profile from a TOML file", self.import_file),
            ("Export…", "Write the profile to a TOML file to share it", self.export_selected),
        ):
            button = QPushButton(name)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            bar.addWidget(button)
            self.buttons[name] = button
        bar.addStretch(1)
        self.folder = caption(ElidedLabel())  # a path: it must not widen the window
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.list)
        split.addWidget(self.detail)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(split, 1)
        layout.addWidget(self.folder)
        self.watch = FolderWatch(store.folder, "*.toml", self)
        self.watch.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """List the folder as it is now, keeping which profiles are selected."""
        selected = {entry.name for entry in self.selected_entries()}
        current = self.list.currentItem()
        current_name = current.data(Qt.ItemDataRole.UserRole).name if current is not None else None
        self.list.blockSignals(True)  # one selection change, at the end
        self.list.clear()
        for entry in self.store.entries():
            item = QListWidgetItem(entry.name if entry.profile else f"{entry.name} (broken)")
            item.setData(Qt.ItemDataRole.UserRole, entry)
            if entry.profile is None:
                item.setForeground(QColor(STATE_COLORS["failed"]))
                item.setToolTip(shown(entry.problem or "", 1000))
            elif self.store.unaccepted_code(entry.profile):
                item.setText(f"{entry.name} (runs code: not accepted)")
                item.setForeground(QColor(STATUS_COLORS["warning"]))
                item.setToolTip("This profile would run code; Apply shows what and asks you first.")
            else:
                item.setToolTip(shown(f"{measured_on(entry.profile)}: {entry.profile.config.summary()}"))
            self.list.addItem(item)
            if entry.name in selected:
                item.setSelected(True)
            if entry.name == current_name:
                self.list.setCurrentItem(item, QItemSelectionModel.SelectionFlag.NoUpdate)
        self.list.blockSignals(False)
        self.folder.setText(f"Profiles are TOML files in {self.store.folder}")
        self._on_selection()

    def selected_entries(self):
        return [item.data(Qt.ItemDataRole.UserRole) for item in self.list.selectedItems()]

    def usable_entries(self):
        """The selected profiles that could be read (broken files are listed but not usable)."""
        return [e for e in self.selected_entries() if e.profile is not None]

    def _on_selection(self) -> None:
        entries = self.selected_entries()
        usable = [e for e in entries if e.profile is not None]
        for name, enabled in (("Apply", len(usable) == 1 and len(entries) == 1), ("Rename…", len(usable) == 1),
                              ("Duplicate…", len(usable) == 1), ("Delete", len(entries) >= 1),
                              ("Diff", len(usable) == 2), ("Export…", len(usable) == 1)):
            self.buttons[name].setEnabled(enabled)
        if len(entries) == 1:
            entry = entries[0]
            if entry.profile is None:
                self.detail.setHtml(f"<h3>{html.escape(entry.name)} cannot be used</h3>"
                                    f"<p style='color:{STATE_COLORS['failed']}'>{html.escape(entry.problem)}</p>"
                                    f"<p>The file is left as it is: {html.escape(str(entry.path))}</p>")
            else:
                evidence = entry.profile.evidence
                weak = weak_evidence(evidence)  # said above the figures, as a warning, not as one of them
                summary = "".join(f"<li>{html.escape(line)}</li>" for line in describe_evidence(evidence)
                                  if line != weak)
                caution = f"<p style='color:{STATUS_COLORS['warning']}'>{html.escape(weak)}</p>" if weak else ""
                code = self.store.unaccepted_code(entry.profile)
                warning = (f"<p style='color:{STATUS_COLORS['warning']}'><b>Runs code you have not accepted:</b>"
                           "</p><ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in code) +
                           "</ul><p>Apply shows this again and asks you first.</p>") if code else ""
                subject = html.escape(shown(measured_on(entry.profile)))
                self.detail.setHtml(
                    f"<h3>{html.escape(entry.name)}</h3>{warning}<p>{subject}: "
                    f"{html.escape(shown(entry.profile.config.summary()))}</p>{caution}<ul>{summary}</ul>"
                    f"<p>The file, {html.escape(str(entry.path))}:</p>"
                    f"<pre>{html.escape(shown_lines(entry.profile.to_toml()))}</pre>")
        elif not entries:
            self.detail.setPlainText("Choose a profile to see its settings and the evidence behind them.")

    def select(self, name: str) -> None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            item.setSelected(item.data(Qt.ItemDataRole.UserRole).name == name)

    def review(self) -> Review | None:
        entries = self.usable_entries()
        if len(entries) != 1 or entries[0].profile is None:
            return None
        profile = entries[0].profile
        return profile_review(entries[0].name, profile.evidence, profile.config)

    def apply_selected(self) -> None:
        """Fill the settings with the profile; one that runs code is applied only once its
        user has seen what and accepted it (the acceptance is stored with the file's hash)."""
        entries = self.usable_entries()
        if len(entries) != 1:
            return
        entry = entries[0]
        code = self.store.unaccepted_code(entry.profile)
        if code:
            try:
                text = entry.path.read_bytes().decode("utf-8", "replace")
            except OSError as exc:
                QMessageBox.warning(self, "tflaunch", f"{entry.path} cannot be read: {exc.strerror or exc}.")
                return
            # What a SavedModel's graph holds, read in a child (this process never imports
            # TensorFlow); a short wait on a click, capped: an unreadable graph is said as such.
            subject = entry.profile
            details = [] if subject.subject_type.is_program else model_details(subject.config.model, timeout=10)
            if not TrustDialog(entry.name, code + [f"    {line}" for line in details], text,
                               self).accepted_code():
                return
            try:  # accept exactly the file shown: one changed meanwhile is refused
                self.store.accept(entry.name, entry.profile.digest)
            except ProfileError as exc:
                QMessageBox.warning(self, "tflaunch", str(exc))
                self.refresh()
                return
            self.refresh()
            self.select(entry.name)
        try:  # what the yes was compared with is what the form gets: the interpreter pinned, code copied
            checked = self.store.load_for_launch(entry.name)
        except ProfileError as exc:  # changed since it was shown, or a copy that cannot be made
            QMessageBox.warning(self, "tflaunch", str(exc))
            self.refresh()
            return
        self.apply_requested.emit(checked)  # a Profile: its subject decides what the form takes

    def diff_selected(self) -> None:
        entries = self.usable_entries()
        if len(entries) != 2:
            return
        a, b = entries
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(repr(x))}</td>"
                       f"<td>{html.escape(repr(y))}</td></tr>"
                       for k, x, y in diff(a.profile, b.profile))
        self.detail.setHtml(f"<h3>{html.escape(a.name)} → {html.escape(b.name)}</h3>"
                            "<table cellpadding='4'><tr><th align='left'>setting</th>"
                            f"<th align='left'>{html.escape(a.name)}</th>"
                            f"<th align='left'>{html.escape(b.name)}</th></tr>"
                            f"{rows or '<tr><td>no differences</td></tr>'}</table>")

    def rename_selected(self) -> None:
        self._with_new_name("Rename profile", self.store.rename)

    def duplicate_selected(self) -> None:
        self._with_new_name("Duplicate profile", self.store.duplicate)

    def _with_new_name(self, title: str, action) -> None:
        entries = self.usable_entries()
        if len(entries) != 1:
            return
        name, ok = QInputDialog.getText(self, title, "New name:", text=entries[0].name)
        if ok and name and name != entries[0].name:
            self._guard(lambda: action(entries[0].name, name))
            self.select(name)

    def delete_selected(self) -> None:
        entries = self.selected_entries()
        if not entries:
            return
        names = ", ".join(e.name for e in entries)
        answer = QMessageBox.question(self, "Delete profiles", f"Delete {names}? The files are removed.")
        if answer == QMessageBox.StandardButton.Yes:
            for entry in entries:
                self._guard(lambda e=entry: e.path.unlink())

    def import_file(self) -> None:
        path = file_dialogs.open_file(self, "profile", "Import a profile", "Profiles (*.toml)")
        if path:
            self._guard(lambda: self.store.import_file(Path(path)))

    def export_selected(self) -> None:
        entries = self.usable_entries()
        if len(entries) != 1:
            return
        path, _ = file_dialogs.save_file(self, "profile", "Export the profile", f"{entries[0].name}.toml",
                                         "Profiles (*.toml)")
        if path:
            self._guard(lambda: self.store.export(entries[0].name, Path(path)))

    def _guard(self, action) -> None:
        """Run a file action; a failure is shown, never raised into the event loop."""
        try:
            action()
        except (ProfileError, OSError) as exc:
            QMessageBox.warning(self, "tflaunch", str(exc))
        self.refresh()
