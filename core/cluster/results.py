"""Result files read back: each checked as a history row is (store/run_rows.py), so a
half-copied or tampered file is named and skipped, never trusted or fatal."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from ..run.record import RunRecord, RunStatus
from ..run.trial_info import TrialInfo
from ..safe_text import shown
from ..store.run_rows import record_from_data
from ..store.stored_values import DamagedRowError, checked_node
from ..sweep.session import failure_reason
from .folder import RESULT_CAP, FolderError, SweepFolder, TrialFile, read_json
from .trial import RESULT_FORMAT, RESULT_VERSION


@dataclass
class TrialResult:
    index: int
    node: dict[str, Any]
    runs: list[tuple[RunRecord, TrialInfo]]  # (record, the trial it was)
    refused: str | None  # the node's launch check refused the trial: why
    started: float | None = None  # the trial's start and end on the node (time.time())
    ended: float | None = None
    cause: str | None = None  # why its runs were cut short, where the trial knew (the early warning)

    @property
    def records(self) -> list[RunRecord]:
        return [r for r, _ in self.runs]

    @property
    def ok(self) -> bool:
        return bool(self.runs) and self.refused is None and all(r.status is RunStatus.OK for r in self.records)

    @property
    def cut_short(self) -> bool:
        """Its runs were ended early (Slurm's SIGTERM), the phases they reached kept."""
        return self.refused is None and any(r.status is RunStatus.CANCELLED for r in self.records)

    @property
    def reason(self) -> str | None:
        """Why it failed, in the words of its first failed run (or the node's refusal), after
        the cause of its end where the trial knew it."""
        said = failure_reason(self.records)
        return self.refused or (f"{self.cause} ({said})" if self.cause and said else self.cause or said)


def read_result(folder: SweepFolder, trial: TrialFile) -> TrialResult | None:
    """The trial's result; None when there is none yet. FolderError when the file is there
    but is not a result of this trial of this sweep (the message says which and what to do)."""
    index = trial.index
    path = folder.result_path(index)
    if not os.path.lexists(path):
        return None
    rerun = f"Delete it and rerun the trial with `tflaunch sweep resubmit {shlex.quote(str(folder.path))}`."
    # Its author counts: a result another user planted (mode 666, a faked 1 ms) must not enter the verdict.
    data = read_json(path, f"the result of trial {index}", RESULT_CAP, folder.shared_gid, group_owned_ok=True)
    if not isinstance(data, dict) or data.get("format") != RESULT_FORMAT or data.get("version") != RESULT_VERSION:
        raise FolderError(f"{path}: not a result tflaunch writes. {rerun}")
    if data.get("sweep") != folder.id or data.get("index") != index:
        raise FolderError(f"{path}: the result of another sweep or trial (sweep {data.get('sweep')!r}, trial "
                          f"{data.get('index')!r}), copied here by mistake. {rerun}")
    node, refused, runs, cause = data.get("node"), data.get("refused"), data.get("runs"), data.get("cause")
    if not isinstance(runs, list) or not all(t is None or isinstance(t, str) for t in (refused, cause)):
        raise FolderError(f"{path}: damaged (its refusal or runs are not what tflaunch writes). {rerun}")
    try:
        node = checked_node(node)
        records = [record_from_data(run) for run in runs]
    except DamagedRowError as exc:
        raise FolderError(f"{path}: damaged ({exc}). {rerun}") from None
    # The history keeps each run as the trial its info names: a run that names another trial
    # (or none) would be stored as that one, again at every merge.
    expected = (trial.index, trial.candidate, trial.node_type, trial.number, trial.warmup, node)
    for _, info in records:
        said = None if info is None else (info.index, info.candidate, info.node_type, info.number, info.warmup,
                                          None if info.node is None else dict(info.node))
        if said != expected:
            raise FolderError(f"{path}: a run in it is not of trial {index} ({trial.candidate} on {trial.node_type}, "
                              f"number {trial.number}) as its trial file says. {rerun}")
    times = [data.get("started"), data.get("ended")]
    started, ended = (float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None for t in times)
    return TrialResult(index, node, [(r, t) for r, t in records if t is not None],  # each named its trial, above
                       refused, started, ended,
                       shown(cause, 200) if cause else None)
