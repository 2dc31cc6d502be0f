"""ClusterTasks: a cluster sweep's slow work off the GUI thread, one task of each kind at a time.

sbatch, squeue and scancel may each take up to a minute to answer (slurm.TIMEOUT_S), the
check job waits for a node, and the shared folder may sit on a slow network file system:
none of it may hold the window. Each task runs in a plain thread and reports back through
queued signals; what it does is core's (core/cluster/), as `tflaunch sweep` does it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from tflaunch.core.cluster import status as cluster_status
from tflaunch.core.cluster.folder import FolderError, SweepFolder, create, load
from tflaunch.core.cluster.merge import NodeTypeSweep, merge, node_type_sweeps
from tflaunch.core.cluster.preflight import CheckError
from tflaunch.core.cluster.slurm import SlurmError
from tflaunch.core.cluster.submit import cancel, resubmit, submit
from tflaunch.core.run.formats import ConversionError
from tflaunch.core.run.launch_check import cached_known_flags
from tflaunch.core.store.history import History, HistoryError
from tflaunch.core.sweep.plan import PlanError, SweepPlan
from tflaunch.core.sweep.session import prepare, refusal

from .run_on_box import ClusterRequest

# The failures a task reports in its own words; anything else is a bug and is raised.
EXPECTED = (FolderError, SlurmError, CheckError, HistoryError, PlanError, ConversionError, OSError)


@dataclass
class Snapshot:
    """A cluster sweep as it stands: every trial's state and, once results exist, each
    node type's sweep (not stored: merging stores them)."""

    folder: SweepFolder
    states: list[cluster_status.TrialState]
    parts: list[NodeTypeSweep]
    note: str | None = None  # Slurm could not be asked: the states are the files' alone, and why

    @property
    def settled(self) -> bool:
        """Nothing left to follow; never while Slurm could not be asked (it may answer next time)."""
        return self.note is None and not {"pending", "running"} & {s.state for s in self.states}


class ClusterTasks(QObject):
    finished = Signal(str, object)  # task name, its result
    failed = Signal(str, str)  # task name, what went wrong (its full message)
    progress = Signal(str, str)  # task name, what it is doing
    _ended = Signal(str, bool, object)  # from the thread: task name, whether it succeeded, result or message

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._running: set[str] = set()
        self._stop = threading.Event()  # the submission's Cancel
        self._ended.connect(self._on_ended)

    def running(self, name: str) -> bool:
        return name in self._running

    def start(self, name: str, work: Callable[[Callable[[str], None]], Any]) -> bool:
        """Run `work(say)` in a thread; False (and nothing started) while a task of that name runs."""
        if name in self._running:
            return False
        self._running.add(name)

        def run() -> None:
            try:
                result: Any = work(lambda text: self._emit(self.progress, name, text))
            except EXPECTED as exc:
                self._emit(self._ended, name, False, str(exc))
            else:
                self._emit(self._ended, name, True, result)

        threading.Thread(target=run, name=f"tflaunch-cluster-{name}", daemon=True).start()
        return True

    def _emit(self, signal: Any, *args: object) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:  # the view was deleted while the thread waited on Slurm
            pass

    def _on_ended(self, name: str, ok: bool, value: object) -> None:
        self._running.discard(name)
        if ok:
            self.finished.emit(name, value)
        else:
            self.failed.emit(name, str(value))

    # -- the tasks ---------------------------------------------------------------------
    def submit(self, plan: SweepPlan, request: ClusterRequest) -> bool:
        self._stop.clear()
        return self.start("submit", lambda say: _submit(plan, request, say, self._stop.is_set))

    def cancel_submission(self) -> None:
        self._stop.set()

    def refresh(self, path: Path) -> bool:
        return self.start("refresh", lambda _say: snapshot(path))

    def merge(self, path: Path, history_path: Path) -> bool:
        return self.start("merge", lambda _say: _merge(path, history_path))

    def resubmit(self, path: Path) -> bool:
        return self.start("resubmit", lambda _say: resubmit(load(path)))

    def cancel_sweep(self, path: Path) -> bool:
        return self.start("cancel", lambda _say: cancel(load(path)))


def snapshot(path: Path) -> Snapshot:
    folder = load(path)
    states, note = cluster_status.states_from_files_if_need_be(folder)
    parts = node_type_sweeps(folder, states) if any(s.result is not None for s in states) else []
    return Snapshot(folder, states, parts, note)


def _submit(plan: SweepPlan, request: ClusterRequest, say: Callable[[str], None],
            stopped: Callable[[], bool]) -> SweepFolder:
    """Expand, then submit each node type's check job and the arrays that wait for it:
    `tflaunch sweep --on slurm`'s steps, with a Cancel asked between node types."""
    say("Preparing the plan…")
    candidates = prepare(plan)
    why = refusal(candidates, known=cached_known_flags)  # only flags already learned: no scan here
    if why:
        raise PlanError(why)
    folder = create(request.shared_dir, plan, candidates, request.node_types, request.options)
    submit(folder, lambda step: say(f"{step[:1].upper()}{step[1:]}…"), stopped)
    return folder


def _merge(path: Path, history_path: Path) -> tuple[Snapshot, list[NodeTypeSweep]]:
    """Merge with a connection of this thread's own (SQLite's are not shared between threads)."""
    before = snapshot(path)
    history = History(history_path)
    try:
        parts = merge(before.folder, before.states, history)
    finally:
        history.close()
    return Snapshot(before.folder, before.states, parts, before.note), parts
