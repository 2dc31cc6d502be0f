"""ClusterSubmission: a sweep submitted to Slurm from the Sweep tab, as `tflaunch sweep
--on slurm` does it (expand into the shared folder, check a node of each type, one array per
type), on a worker thread: the check job may wait minutes for a node."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from tflaunch.core.cluster.folder import SweepFolder
from tflaunch.core.sweep.plan import PlanError, SweepPlan

from .cluster_tasks import ClusterTasks
from .run_on_box import RunOnBox


class ClusterSubmission(QObject):
    message = Signal(str)  # what it is doing, or why it could not submit (the whole message)
    busy_changed = Signal(bool)
    submitted = Signal(object)  # Path: the sweep's folder, to follow

    def __init__(self, run_on: RunOnBox, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.run_on = run_on
        self.tasks = ClusterTasks(self)
        self.tasks.progress.connect(lambda _name, text: self.message.emit(text))
        self.tasks.finished.connect(self._on_finished)
        self.tasks.failed.connect(self._on_failed)

    @property
    def running(self) -> bool:
        return self.tasks.running("submit")

    def start(self, plan: SweepPlan) -> None:
        """Submit `plan` with the cluster settings on show; a field that cannot be used is
        said at once, and nothing in the form is changed either way."""
        try:
            request = self.run_on.request()
        except PlanError as exc:
            self.message.emit(f"Cannot submit: {exc}")
            return
        if self.tasks.submit(plan, request):
            self.busy_changed.emit(True)
            self.message.emit("Submitting to Slurm: preparing the plan…")

    def cancel(self) -> None:
        if self.running:
            self.tasks.cancel_submission()
            self.message.emit("Cancelling the submission (a waiting check job is cancelled; nothing more is "
                              "submitted)…")

    def _on_finished(self, _name: str, folder: object) -> None:
        self.busy_changed.emit(False)
        if isinstance(folder, SweepFolder):
            arrays = len(folder.node_types)
            self.message.emit(f"Submitted {len(folder.indices)} trials to Slurm ({arrays} job array"
                              f"{'s, one per node type' if arrays > 1 else ''}); followed below.")
            self.submitted.emit(Path(folder.path))

    def _on_failed(self, _name: str, message: str) -> None:
        self.busy_changed.emit(False)
        self.message.emit(f"Cannot submit: {message}")
