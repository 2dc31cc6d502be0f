"""The shared folder of a cluster sweep: its layout, its files, and their checks.

    DIR/sweep.json           the plan, the node types and the options it was submitted with
    DIR/trials/NNNN.json     one trial: its settings, node type and place in the order
    DIR/job.sh OFFSET        what each array task runs: `tflaunch trial DIR OFFSET+$SLURM_ARRAY_TASK_ID`
    DIR/jobs.json            every submission (job id, node type, indices) and cancel
    DIR/results/NNNN.json    a finished trial's runs and the node they ran on
    DIR/exits/NNNN           the exit status of the task that ran it (written by job.sh)
    DIR/logs/JOB_TASK.out    each task's output (and .err), as Slurm writes it
    DIR/check/               the markers of the check job (preflight.py)

Every file is written whole (a temporary name, then a rename), so a reader on another
machine never sees half of one; no SQLite here (its locks are not to be trusted on NFS).
Every file read is checked: a folder is shared, and anything in it may be damaged.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..settings.config import LaunchConfig
from ..store.atomic import atomic_write
from ..sweep.plan import Candidate, SweepPlan, Trial, schedule

FORMAT = "tflaunch-cluster-sweep"
VERSION = 1


class FolderError(Exception):
    """A sweep folder that cannot be made or read: the message names the file, the cause
    and what to do."""


@dataclass(frozen=True)
class NodeType:
    """One kind of node a sweep runs on: its own job array and its own verdict."""

    name: str  # "a100", or "any" when no GPU type was asked for
    gres: str | None  # what sbatch asks for: "gpu:a100:1"


@dataclass(frozen=True)
class TrialFile:
    index: int  # the array task index that runs it
    node_type: str
    number: int  # its place in its node type's order (1, 2, ...)
    candidate: str
    baseline: bool
    warmup: bool
    instances: int
    config: LaunchConfig

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "node_type": self.node_type, "number": self.number,
                "candidate": self.candidate, "baseline": self.baseline, "warmup": self.warmup,
                "instances": self.instances, "config": self.config.to_dict()}


def name(index: int) -> str:
    return f"{index:04d}"


def write_json(path: Path, data: Any) -> None:
    atomic_write(path, (json.dumps(data, indent=1) + "\n").encode())


def read_json(path: Path, what: str) -> Any:
    """A file of the folder, parsed; FolderError naming it when it is missing or damaged."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FolderError(f"{path}: missing ({what}). Is this a tflaunch sweep folder, and is it shared "
                          "with this machine?") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FolderError(f"{path}: cannot be read as {what} ({exc}). It may be half-copied or damaged; "
                          "if it is a result, `tflaunch sweep resubmit` runs its trial again.") from None


@dataclass
class SweepFolder:
    path: Path
    id: str
    plan: SweepPlan
    node_types: list[NodeType]
    options: dict[str, Any]
    created: float
    # Trial files are written once, when the folder is made: each is read (and checked) once
    # per SweepFolder, however many of status, merge and submit ask for it.
    _read: dict[int, TrialFile] = field(default_factory=dict, repr=False, compare=False)

    # -- the layout -----------------------------------------------------------------------
    def trial_path(self, index: int) -> Path:
        return self.path / "trials" / f"{name(index)}.json"

    def result_path(self, index: int) -> Path:
        return self.path / "results" / f"{name(index)}.json"

    def exit_path(self, index: int) -> Path:
        return self.path / "exits" / name(index)

    @property
    def jobs_path(self) -> Path:
        return self.path / "jobs.json"

    @property
    def script_path(self) -> Path:
        return self.path / "job.sh"

    @property
    def indices(self) -> list[int]:
        return sorted(int(p.stem) for p in (self.path / "trials").glob("[0-9]*.json") if p.stem.isdigit())

    # -- reading ---------------------------------------------------------------------------
    def trial(self, index: int) -> TrialFile:
        if index not in self._read:
            self._read[index] = self._read_trial(index)
        return self._read[index]

    def _read_trial(self, index: int) -> TrialFile:
        check_owned(self.trial_path(index))  # what the trial runs: only what its owner wrote
        if not self.trial_path(index).exists() and (self.path / "sweep.json").exists():
            known = self.indices
            span = f"trials {known[0]} to {known[-1]}" if known else "no trials"
            raise FolderError(f"{self.path}: this sweep has no trial {index} (it has {span}).")
        data = read_json(self.trial_path(index), f"trial {index}")
        try:
            trial = TrialFile(int(data["index"]), str(data["node_type"]), int(data["number"]), str(data["candidate"]),
                              bool(data["baseline"]), bool(data["warmup"]), int(data["instances"]),
                              LaunchConfig.from_dict(data["config"]))
            if trial.index != index:  # its result would go to another trial's file
                raise ValueError(f"index {trial.index} in the file of trial {index}")
            return trial
        except (KeyError, TypeError, ValueError) as exc:
            raise FolderError(f"{self.trial_path(index)}: not a trial tflaunch wrote ({exc!r} is wrong or "
                              "missing). Expand the sweep again with `tflaunch sweep --on slurm`.") from None

    def trials(self) -> list[TrialFile]:
        return [self.trial(i) for i in self.indices]

    def jobs(self) -> dict[str, Any]:
        """{"submitted": [{job_id, node_type, indices, at}], "cancelled": [job ids]}."""
        if not self.jobs_path.exists():
            return {"submitted": [], "cancelled": []}
        data = read_json(self.jobs_path, "the sweep's submissions")
        if not (isinstance(data, dict) and isinstance(data.get("submitted"), list)
                and all(map(_is_submission, data["submitted"])) and isinstance(data.setdefault("cancelled", []), list)
                and all(isinstance(j, str) for j in data["cancelled"])):
            raise FolderError(f"{self.jobs_path}: not the submissions tflaunch wrote. The results are not lost: "
                              f"move it aside (`mv {shlex.quote(str(self.jobs_path))} "
                              f"{shlex.quote(str(self.jobs_path))}.damaged`) and cancel the sweep's jobs still in "
                              "`squeue` by hand; `tflaunch sweep resubmit` then runs the trials without a result.")
        return data

    def add_submission(self, job_id: str, node_type: str, indices: list[int], offset: int = 0) -> None:
        """`indices`: the trials it runs; `offset`: its array task N runs trial offset + N."""
        jobs = self.jobs()
        jobs["submitted"].append({"job_id": job_id, "node_type": node_type, "indices": indices, "offset": offset,
                                  "at": time.time()})
        write_json(self.jobs_path, jobs)

    def add_cancelled(self, job_ids: list[str]) -> None:
        jobs = self.jobs()
        jobs["cancelled"] = sorted(set(jobs["cancelled"]) | set(job_ids))
        write_json(self.jobs_path, jobs)

    def node_type(self, name_: str) -> NodeType:
        return next(t for t in self.node_types if t.name == name_)


def _is_submission(entry: Any) -> bool:
    """An entry of jobs.json's "submitted" as add_submission writes it."""
    def whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return (isinstance(entry, dict) and isinstance(entry.get("job_id"), str) and entry["job_id"].isdigit()
            and isinstance(entry.get("node_type"), str) and isinstance(entry.get("indices"), list)
            and all(map(whole, entry["indices"])) and whole(entry.setdefault("offset", 0)))


def create(root: Path, plan: SweepPlan, candidates: list[Candidate], node_types: list[NodeType],
           options: dict[str, Any]) -> SweepFolder:
    """A new sweep folder under `root`: the plan expanded into one file per trial, each node
    type's trials in their own order (shuffled per round, as a local sweep's), and job.sh."""
    if "\\" in str(root):
        # Slurm reads a backslash in --output as "no %A, %a here" and drops it: the logs could not be written.
        raise FolderError(f"{root}: Slurm cannot write its job logs under a path with a backslash. Choose a "
                          "shared folder (--shared-dir; the app's Shared folder) whose path has none.")
    sweep_id = uuid.uuid4().hex[:12]
    path = root / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}-{sweep_id[:6]}"
    try:
        for part in ("trials", "results", "exits", "logs", "check"):
            (path / part).mkdir(mode=0o755, parents=True, exist_ok=True)
    except OSError as exc:
        raise FolderError(f"{root}: the sweep folder cannot be made there ({exc.strerror}). Choose a shared "
                          "folder (--shared-dir; the app's Shared folder) that you can write and the cluster's nodes "
                          "see too (home or scratch).") from None
    folder = SweepFolder(path, sweep_id, plan, node_types, options, time.time())
    index = 0
    for offset, node_type in enumerate(node_types):
        # Each node type its own shuffle: a node's drift over the array favours no setting.
        for trial in schedule(plan, candidates, plan.seed + offset):
            write_json(folder.trial_path(index), _trial_file(index, node_type.name, trial).to_dict())
            index += 1
    write_json(path / "sweep.json", {
        "format": FORMAT, "version": VERSION, "id": sweep_id, "created": folder.created, "plan": plan.to_dict(),
        "node_types": [{"name": t.name, "gres": t.gres} for t in node_types], "options": options})
    folder.script_path.write_text(job_script(path), encoding="utf-8")
    folder.script_path.chmod(0o755)
    return folder


def _trial_file(index: int, node_type: str, trial: Trial) -> TrialFile:
    c = trial.candidate
    return TrialFile(index, node_type, trial.number, c.key, c.baseline, trial.warmup, c.instances, c.config)


def job_script(path: Path) -> str:
    """What each array task runs: the trial with the same installed tflaunch, then its exit
    status in exits/ (a task that ends without a result still says how it ended). Its one
    argument is the node type's first trial index: each node type's array counts from 0,
    so no array outgrows the cluster's MaxArraySize because of the node types before it."""
    python, folder = shlex.quote(sys.executable), shlex.quote(str(path))
    return f"""#!/bin/sh
# tflaunch cluster sweep: one trial per array task (written by tflaunch; rerun by
# `tflaunch sweep resubmit {folder}`).
trial=$(( ${{1:-0}} + SLURM_ARRAY_TASK_ID ))
index=$(printf %04d "$trial")
{python} -m tflaunch.core.cli.main trial {folder} "$trial"
status=$?
printf '%s\\n' "$status" > {folder}/exits/.$index.tmp && mv {folder}/exits/.$index.tmp {folder}/exits/$index
exit $status
"""


# What a node runs or writes into: the folder, its plan and script, and the folders the
# trials' files, results, exit statuses, logs and check scripts are in. A folder others may
# write lets them put their own file (or a link to one of yours) where a trial reads or writes.
OWNED_PARTS = ("", "sweep.json", "job.sh", "trials", "results", "exits", "logs", "check")


def check_ownership(path: Path) -> None:
    """The folder and what a node runs from it are the user's alone: a trial runs whatever
    its file names, so a folder others may write is refused, not trusted."""
    for part in OWNED_PARTS:
        check_owned(path / part)


def check_owned(part: Path) -> None:
    """FolderError when `part` is another user's or others may write it; a missing part is
    said by whoever reads it."""
    try:
        st = part.stat()
    except OSError:
        return
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise FolderError(f"{part}: owned by another user or writable by others (mode {st.st_mode & 0o777:o}), "
                          "so its trials could run someone else's settings. tflaunch runs only a sweep folder "
                          f"that is yours alone: `chmod go-w {shlex.quote(str(part))}`, or submit again.")


def load(path: Path) -> SweepFolder:
    """A sweep folder read back; FolderError saying what is wrong with it."""
    check_ownership(path)
    data = read_json(path / "sweep.json", "the sweep's plan")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise FolderError(f"{path}: not a tflaunch cluster sweep folder (its sweep.json is not one tflaunch "
                          "wrote). Give the folder `tflaunch sweep --on slurm` printed.")
    if data.get("version") != VERSION:
        raise FolderError(f"{path}: written by another version of tflaunch (format {data.get('version')!r}, "
                          f"this one reads {VERSION}). Use the tflaunch that submitted it.")
    try:
        return SweepFolder(path, str(data["id"]), SweepPlan.from_dict(data["plan"]),
                           [NodeType(str(t["name"]), t["gres"]) for t in data["node_types"]],
                           dict(data["options"]), float(data["created"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise FolderError(f"{path / 'sweep.json'}: damaged ({exc!r} is wrong or missing). The results in "
                          f"{path / 'results'} are intact; submit the sweep again to measure anew.") from None
