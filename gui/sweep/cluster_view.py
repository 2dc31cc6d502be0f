"""ClusterSweepView: a sweep run as Slurm job arrays, followed from its shared folder.

Each trial's state, refreshed every few seconds while any is pending or running (never two
refreshes at once: squeue may take a minute to answer), and once results exist one group
per node type with its own results and verdict. Merge stores the results in the history
(as `tflaunch sweep merge` does), Resubmit runs failed and lost trials again, Cancel sweep
scancels its jobs. The work is core's, done by ClusterTasks off the GUI thread.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tflaunch.core.cluster.merge import NodeTypeSweep
from tflaunch.core.cluster.review import folder_review
from tflaunch.core.cluster.status import summary_line
from tflaunch.core.cluster.submit import RERUN_STATES
from tflaunch.core.report.review import Review
from tflaunch.core.store.history import History

from ..widgets.elided_label import ElidedLabel
from ..widgets.palette import error_style, keep_colours
from ..widgets.text_roles import headline
from ..widgets.wrapping_label import WrappingLabel
from .cluster_tasks import ClusterTasks, Snapshot
from .node_type_group import NodeTypeGroup
from .trial_table import TrialTable

REFRESH_MS = 3000


class ClusterSweepView(QWidget):
    merged = Signal()  # runs were stored in the history
    closed = Signal()  # the user closed it: the Sweep tab shows its local results again
    refreshed = Signal(object)  # Snapshot: each refresh that reached the view (tests wait on it)
    save_winner_requested = Signal(object, int)  # a node type's NodeTypeSweep, its History sweep

    def __init__(self, history: History | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self.path: Path | None = None
        self.snapshot: Snapshot | None = None
        self._history_ids: dict[str, int] = {}
        self._room_wanted = False  # results appeared: the trials give up height once the view has some
        self.tasks = ClusterTasks(self)
        self.tasks.finished.connect(self._on_finished)
        self.tasks.failed.connect(self._on_failed)
        self._timer = QTimer(self)  # one shot, started again after each refresh that leaves work going
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)

        self.title = headline(ElidedLabel())
        self.counts = WrappingLabel()
        self.message = WrappingLabel()
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Refresh and Close beside the lines they act on: the buttons' row fits a 1024 px screen.
        self.refresh_button = QToolButton()
        self.refresh_button.setText("Refresh")
        self.refresh_button.setToolTip("Ask Slurm and the shared folder now (done by itself every few seconds while "
                                       "trials are pending or running)")
        self.refresh_button.clicked.connect(self.refresh)
        self.merge_button = QPushButton("Merge into history")
        self.merge_button.setToolTip("Store every result in this machine's run history, one History sweep per node "
                                     "type (merging again stores nothing twice)")
        self.merge_button.clicked.connect(self.merge)
        self.resubmit_button = QPushButton("Resubmit failed/lost")
        self.resubmit_button.setToolTip("Run the failed, lost and cancelled trials again (their earlier results are "
                                        "kept aside in results/replaced)")
        self.resubmit_button.clicked.connect(self.resubmit)
        self.cancel_button = QPushButton("Cancel sweep…")
        self.cancel_button.setToolTip("scancel every job of this sweep (asks first)")
        self.cancel_button.clicked.connect(self.ask_and_cancel)
        self.close_button = QToolButton()
        self.close_button.setText("Close")
        self.close_button.setToolTip("Stop following this folder; the Sweep tab shows its local results again")
        self.close_button.clicked.connect(self.close_sweep)
        buttons = QHBoxLayout()
        for button in (self.merge_button, self.resubmit_button, self.cancel_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        title = QHBoxLayout()
        title.addWidget(self.title, 1)
        title.addWidget(self.close_button)
        counts = QHBoxLayout()
        counts.addWidget(self.counts, 1)
        counts.addWidget(self.refresh_button)

        self.trials = TrialTable()
        self._groups_box = QWidget()
        self._groups_layout = QVBoxLayout(self._groups_box)
        self._groups_layout.setContentsMargins(0, 0, 0, 0)
        self._groups_layout.addStretch(1)
        self.groups: list[NodeTypeGroup] = []
        self._groups_scroll = QScrollArea()
        self._groups_scroll.setWidget(self._groups_box)
        self._groups_scroll.setWidgetResizable(True)
        self._groups_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._groups_scroll.hide()  # until there are results: the trials take the height
        self.parts = QSplitter(Qt.Orientation.Vertical)
        self.parts.addWidget(self.trials)
        self.parts.addWidget(self._groups_scroll)
        self.parts.setChildrenCollapsible(False)
        self.parts.setStretchFactor(0, 0)  # height the window gains goes to the results
        self.parts.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(title)
        layout.addLayout(counts)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(self.parts, 1)
        keep_colours(self, self._recolour)
        self._update_buttons()

    # -- following a folder --------------------------------------------------------------
    def open(self, path: Path) -> None:
        """Follow the sweep in `path` (read on a worker: the folder may be on a slow share)."""
        self.path = Path(path)
        self.snapshot = None
        self._history_ids = {}
        self.title.setText(f"Cluster sweep {self.path}")
        self.trials.setRowCount(0)
        self._show_groups([])
        self.counts.setText(f"Reading {self.path}…")
        self._say("")
        self.refresh()

    def close_sweep(self) -> None:
        """Stop following: no refresh is asked for after this; one under way is dropped."""
        self.path = None
        self._timer.stop()
        self._update_buttons()
        self.closed.emit()

    @property
    def refreshing(self) -> bool:
        """Whether a refresh runs or is due."""
        return self._timer.isActive() or self.tasks.running("refresh")

    def refresh(self) -> None:
        self._timer.stop()
        if self.path is not None and self.tasks.refresh(self.path):
            self._update_buttons()

    def merge(self) -> None:
        if self.path is not None and self.history is not None and self.tasks.merge(self.path, self.history.path):
            self._say("Merging into the run history…")
            self._update_buttons()

    def resubmit(self) -> None:
        if self.path is not None and self.tasks.resubmit(self.path):
            self._say("Resubmitting the failed, lost and cancelled trials…")
            self._update_buttons()

    def ask_and_cancel(self) -> None:
        if self.path is None:
            return
        answer = QMessageBox.question(
            self, "Cancel the cluster sweep?",
            f"scancel every job of {self.path.name}? Finished trials keep their results; the others become "
            "cancelled, and Resubmit runs them again later.")
        if answer == QMessageBox.StandardButton.Yes:
            self.cancel_sweep()

    def cancel_sweep(self) -> None:
        if self.path is not None and self.tasks.cancel_sweep(self.path):
            self._say("Cancelling the sweep's jobs…")
            self._update_buttons()

    # -- results from the worker ---------------------------------------------------------
    def _current(self, snapshot: Snapshot) -> bool:
        return self.path is not None and snapshot.folder.path == self.path

    def _on_finished(self, name: str, result: object) -> None:
        if name == "refresh" and isinstance(result, Snapshot):
            if self._current(result):
                self._show(result)
                self.refreshed.emit(result)
                if not result.settled:
                    self._timer.start()
            elif self.path is not None:
                self.refresh()  # the folder changed while an earlier one was read
        elif name == "merge" and isinstance(result, tuple):
            snapshot, parts = result
            self.merged.emit()
            if self._current(snapshot):
                self._history_ids = {p.node_type: p.history_id for p in parts if p.history_id is not None}
                self._show(snapshot)
                self._say(f"Merged into the run history: {sum(p.added for p in parts)} runs added, "
                          f"{sum(p.replaced for p in parts)} replaced ({len(parts)} History sweep"
                          f"{'s' if len(parts) != 1 else ''}, one per node type).")
        elif name == "resubmit" and isinstance(result, tuple):
            again, jobs = result
            self._say(f"Resubmitted {len(again)} trial{'s' if len(again) != 1 else ''} ({', '.join(map(str, again))}): "
                      + ", ".join(f"{t} job {j}" for t, j in jobs.items()) if again else "Nothing to resubmit.")
            self.refresh()
        elif name == "cancel" and isinstance(result, list):
            self._say(f"Cancelled job{'s' if len(result) != 1 else ''} {', '.join(result)}." if result
                      else "Nothing to cancel: no job of this sweep is known to Slurm.")
            self.refresh()
        self._update_buttons()

    def _on_failed(self, name: str, message: str) -> None:
        if name == "refresh" and self.path is not None:
            self._timer.start()  # the controller may answer next time; the last states stay on show
        self._say(message, error=True)
        self._update_buttons()

    # -- showing ---------------------------------------------------------------------------
    def _show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.trials.show_states(snapshot.states)
        following = "" if snapshot.settled else f"; following (every {REFRESH_MS // 1000} s)"
        self.counts.setText(summary_line(snapshot.states) + following)
        if snapshot.note:
            self._say(snapshot.note, error=True)
        self._show_groups(snapshot.parts)

    def _show_groups(self, parts: list[NodeTypeSweep]) -> None:
        while len(self.groups) < len(parts):
            group = NodeTypeGroup()
            group.save_requested.connect(self.save_winner_requested)
            self._groups_layout.insertWidget(len(self.groups), group)
            self.groups.append(group)
        while len(self.groups) > len(parts):
            self.groups.pop().deleteLater()
        for group, part in zip(self.groups, parts, strict=True):
            group.show_part(part, self._history_ids.get(part.node_type))
        if parts and self._groups_scroll.isHidden():  # the first results: the trials give up most of the height
            self._groups_scroll.show()
            self._room_wanted = True
            QTimer.singleShot(0, self, self._make_room_for_results)  # once the splitter has taken in the show
        self._groups_scroll.setVisible(bool(parts))

    def review(self) -> Review | None:
        """The review of what the folder holds now: a verdict per node type (File > Export)."""
        snapshot = self.snapshot
        if snapshot is None or not any(p.sweep.trials_run for p in snapshot.parts):
            return None
        return folder_review(snapshot.folder, snapshot.states, snapshot.parts)

    def _make_room_for_results(self) -> None:
        total = sum(self.parts.sizes())
        trials = max(self.trials.minimumHeight(), total // 4)
        if total > 2 * trials:
            self.parts.setSizes([trials, total - trials])
            self._room_wanted = False

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        """Results that came while the view was hidden (another tab) get their room when it is laid out."""
        super().resizeEvent(event)
        if self._room_wanted:
            QTimer.singleShot(0, self, self._make_room_for_results)

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet(error_style() if error else "")
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _recolour(self) -> None:
        self.trials.recolour()
        for group in self.groups:
            group.recolour()

    def _update_buttons(self) -> None:
        states = self.snapshot.states if self.snapshot is not None else []
        open_ = self.path is not None
        self.refresh_button.setEnabled(open_ and not self.tasks.running("refresh"))
        results = any(s.result is not None for s in states)
        self.merge_button.setEnabled(open_ and results and self.history is not None
                                     and not self.tasks.running("merge"))
        if self.history is None:
            self.merge_button.setToolTip("Unavailable: this session has no run history to merge into")
        self.resubmit_button.setEnabled(open_ and any(s.state in RERUN_STATES for s in states)
                                        and not self.tasks.running("resubmit"))
        self.cancel_button.setEnabled(open_ and any(s.state in ("pending", "running") for s in states)
                                      and not self.tasks.running("cancel"))
