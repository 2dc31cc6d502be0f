"""The shared folder of a cluster sweep: its layout, its files, and their checks.

    DIR/sweep.json           the plan, the node types and the options it was submitted with
    DIR/trials/NNNN.json     one trial: its settings, node type and place in the order
    DIR/job.sh LIST          what each array task runs: `tflaunch trial DIR` with its line of tasks/LIST
    DIR/jobs.json            every submission (job id, node type, indices) and cancel
    DIR/results/NNNN.json    a finished trial's runs and the node they ran on
    DIR/exits/NNNN           the exit status of the trial (written by the trial, or by job.sh if it died)
    DIR/tasks/LIST           each array's tasks: line N, the trials its task N runs
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
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..settings.config import LaunchConfig
from ..store.atomic import atomic_write
from ..sweep.plan import Candidate, SweepPlan, Trial, schedule
from .bounded_read import UnreadableFileError, read_bounded
from .ownership import OwnershipError, check_part
from .resources import check_placement

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


JSON_CAP = 4 << 20  # sweep.json, a trial, jobs.json: far above what tflaunch writes
RESULT_CAP = 32 << 20  # a result: a trial's runs with their samples (capped where they enter)


def read_json(path: Path, what: str, cap: int = JSON_CAP, shared_gid: int | None = None,
              group_owned_ok: bool = False) -> Any:
    """A file of the folder, parsed; FolderError naming it when it is missing, damaged, not a
    regular file of a sane size, or written by someone the ownership rule refuses."""
    try:
        return json.loads(read_bounded(path, cap, shared_gid, group_owned_ok).decode("utf-8"))
    except (OwnershipError, UnreadableFileError) as exc:
        raise FolderError(str(exc)) from None
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

    @property
    def shared_gid(self) -> int | None:
        """The group the sweep was shared with (--shared-group), whose members may write its
        folders and results; None: the user's alone (see ownership.py)."""
        gid = self.options.get("shared_gid")
        return gid if isinstance(gid, int) and not isinstance(gid, bool) else None

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
        if not self.trial_path(index).exists() and (self.path / "sweep.json").exists():
            known = self.indices
            span = f"trials {known[0]} to {known[-1]}" if known else "no trials"
            raise FolderError(f"{self.path}: this sweep has no trial {index} (it has {span}).")
        data = read_json(self.trial_path(index), f"trial {index}", shared_gid=self.shared_gid)  # yours alone
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
        data = read_json(self.jobs_path, "the sweep's submissions", shared_gid=self.shared_gid)
        if not (isinstance(data, dict) and isinstance(data.get("submitted"), list)
                and all(map(_is_submission, data["submitted"])) and isinstance(data.setdefault("cancelled", []), list)
                and all(isinstance(j, str) for j in data["cancelled"])):
            raise FolderError(f"{self.jobs_path}: not the submissions tflaunch wrote. The results are not lost: "
                              f"move it aside (`mv {shlex.quote(str(self.jobs_path))} "
                              f"{shlex.quote(str(self.jobs_path))}.damaged`) and cancel the sweep's jobs still in "
                              "`squeue` by hand; `tflaunch sweep resubmit` then runs the trials without a result.")
        return data

    def add_submission(self, job_id: str, node_type: str, indices: list[int], offset: int = 0,
                       tasks: list[list[int]] | None = None, check: str | None = None) -> None:
        """`indices`: the trials it runs; `tasks`: array task N runs tasks[N], one after another
        (without: trial offset + N, as before trials per task); `check`: the check job it waits for."""
        jobs = self.jobs()
        entry: dict[str, Any] = {"job_id": job_id, "node_type": node_type, "indices": indices, "offset": offset,
                                 "at": time.time()}
        if tasks is not None:
            entry["tasks"] = tasks
        if check is not None:
            entry["check"] = check
        jobs["submitted"].append(entry)
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
    def job_id(value: Any) -> bool:
        return isinstance(value, str) and value.isascii() and value.isdigit()
    tasks = entry.get("tasks", []) if isinstance(entry, dict) else None
    return (isinstance(entry, dict) and job_id(entry.get("job_id"))
            and isinstance(entry.get("node_type"), str) and isinstance(entry.get("indices"), list)
            and all(map(whole, entry["indices"])) and whole(entry.setdefault("offset", 0))
            and isinstance(tasks, list) and all(isinstance(t, list) and all(map(whole, t)) for t in tasks)
            and (entry.get("check") is None or job_id(entry["check"])))


def task_of(entry: dict[str, Any]) -> dict[int, int]:
    """{trial index: its array task} of one submission."""
    if entry.get("tasks"):
        return {i: n for n, task in enumerate(entry["tasks"]) for i in task}
    return {i: i - int(entry.get("offset", 0)) for i in entry["indices"]}


def create(root: Path, plan: SweepPlan, candidates: list[Candidate], node_types: list[NodeType],
           options: dict[str, Any]) -> SweepFolder:
    """A new sweep folder under `root`: the plan expanded into one file per trial, each node
    type's trials in their own order (shuffled per round, as a local sweep's), and job.sh."""
    try:  # here, where both the command line's and the app's sweeps come: nothing unchecked is written
        check_placement(str(root), options.get("partition"), [(t.name, t.gres) for t in node_types],
                        list(options.get("sbatch_args") or []))
    except ValueError as exc:
        raise FolderError(str(exc)) from None
    if "\\" in str(root):
        # Slurm reads a backslash in --output as "no %A, %a here" and drops it: the logs could not be written.
        raise FolderError(f"{root}: Slurm cannot write its job logs under a path with a backslash. Choose a "
                          "shared folder (--shared-dir; the app's Shared folder) whose path has none.")
    sweep_id = uuid.uuid4().hex[:12]
    path = root / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}-{sweep_id[:6]}"
    shared_gid = options.get("shared_gid")
    try:
        root.mkdir(parents=True, exist_ok=True)
        # The modes are set, not left to the umask: under `umask 002` mkdir alone made the sweep
        # folder group-writable, which every trial then refused. A shared group gets its folders
        # (setgid, so what the nodes write there is the group's too); otherwise they are the user's.
        for part in ("", *FOLDERS):
            (path / part).mkdir(exist_ok=True)
            if isinstance(shared_gid, int):
                os.chown(path / part, -1, shared_gid)
                (path / part).chmod(0o2775)
            else:
                (path / part).chmod(0o755)
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
    save_plan(folder)
    folder.script_path.write_text(job_script(path, options), encoding="utf-8")
    folder.script_path.chmod(0o755)
    return folder


def save_plan(folder: SweepFolder) -> None:
    """sweep.json: the plan, the node types and the options (resubmit's new resources too)."""
    write_json(folder.path / "sweep.json", {
        "format": FORMAT, "version": VERSION, "id": folder.id, "created": folder.created,
        "plan": folder.plan.to_dict(), "node_types": [{"name": t.name, "gres": t.gres} for t in folder.node_types],
        "options": folder.options})


def _trial_file(index: int, node_type: str, trial: Trial) -> TrialFile:
    c = trial.candidate
    return TrialFile(index, node_type, trial.number, c.key, c.baseline, trial.warmup, c.instances, c.config)


def job_script(path: Path, options: dict[str, Any] | None = None) -> str:
    """What each array task runs: its trials (tasks/LIST's line N for task N; a number
    instead: the one trial OFFSET + N) in one `tflaunch trial DIR INDEX...`, which runs them
    one after another and leaves each one's exit status in exits/; a trial it was running
    when it died gets the status here (a trial that ends without a result still says how it
    ended). One process for the task's trials: an interpreter start per trial would cost a
    second each. The user's setup lines (`module load`, `conda activate`) come first; a
    container runs the trials inside it. The trial process dies with this shell (trial.py
    sets its parent-death signal), and a TERM from Slurm (scancel, the time limit) is passed on,
    as is the early warning (--signal=B:USR1 reaches this shell only); the trial starts with
    USR1 ignored until its handler is set, so a warning in its first second does not kill it."""
    options = options or {}
    folder = shlex.quote(str(path))
    # Each setup line is the user's shell line, run by eval from one quoted word: a line with
    # an open quote or a `#SBATCH` of its own breaks neither the script nor its directives.
    # One that fails ends the task's trials with `setup:N:STATUS` (status.py says which line, and
    # its output, which is in the task's log), never trials run without what it was to set up.
    setup = "\n".join(f"eval {shlex.quote(str(line))} || setup_failed {n} $?"
                      for n, line in enumerate(options.get("setup") or [], 1))
    prefix = container_prefix(options.get("container"))
    command = " ".join(map(shlex.quote, prefix + [sys.executable]))
    # Which shell the trial must die with (trial.py): a kill before its interpreter is up counts too.
    shell_pid = "" if prefix else "trap '' USR1; TFLAUNCH_JOB_SHELL=$$ "  # srun, apptainer pass USR1 on: not ignored
    # No outside text in the comments: sbatch reads a `#SBATCH` line anywhere before the first
    # command, and a path's line break would start one (the values are checked as well).
    return f"""#!/bin/sh
# tflaunch cluster sweep: each array task runs its trials (written by tflaunch; rerun by
# `tflaunch sweep resubmit` with this folder).
case "$1" in
  *[!0-9]*) trials=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" {folder}/tasks/"$1") ;;
  *) trials=$(( ${{1:-0}} + SLURM_ARRAY_TASK_ID )) ;;
esac
case "$trials" in *[!0-9\\ ]*|'') echo "tflaunch: not a task of trials: $trials" >&2; exit 2 ;; esac
setup_failed() {{
  echo "tflaunch: setup line $1 failed with status $2; the task's trials did not run" >&2
  for trial in $trials; do
    index=$(printf %04d "$trial")
    printf 'setup:%s:%s\\n' "$1" "$2" > {folder}/exits/.$index.tmp &&
      mv {folder}/exits/.$index.tmp {folder}/exits/$index
  done
  exit "$2"
}}
{setup}
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null' TERM INT
trap '[ -n "$child" ] && kill -USR1 "$child" 2>/dev/null' USR1
({shell_pid}exec {command} -m tflaunch.core.cli.main trial {folder} $trials) &
child=$!
wait "$child"; status=$?
while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
for trial in $trials; do
  index=$(printf %04d "$trial")
  if [ ! -e {folder}/exits/$index ]; then
    printf '%s\n' "$status" > {folder}/exits/.$index.tmp && mv {folder}/exits/.$index.tmp {folder}/exits/$index
    break
  fi
done
exit $status
"""


def container_prefix(image: Any) -> list[str]:
    """What a trial is started through for --container IMAGE: Pyxis (`pyxis:IMAGE`, through
    srun's --container-image) or Apptainer/Singularity (a .sif, docker://, oras:// ...)."""
    if not isinstance(image, str) or not image:
        return []
    if image.startswith("pyxis:"):
        return ["srun", "--ntasks=1", f"--container-image={image.removeprefix('pyxis:')}",
                "--container-mounts=/tmp:/tmp", "--no-container-remap-root"]
    runtime = "singularity" if shutil.which("apptainer") is None and shutil.which("singularity") else "apptainer"
    return [runtime, "exec", "--nv", image]


# What a node runs or writes into: the folder, its plan and script, and the folders the
# trials' files, results, exit statuses, logs and check scripts are in. A folder others may
# write lets them put their own file (or a link to one of yours) where a trial reads or writes.
FOLDERS = ("trials", "results", "exits", "logs", "check", "tasks")
OWNED_PARTS = ("", "sweep.json", "job.sh", *FOLDERS)


def check_ownership(path: Path, shared_gid: int | None = None) -> None:
    """The folder and what a node runs from it are the user's (or the sweep's shared
    group's, ownership.py): a trial runs whatever its file names, so a folder others may
    write is refused, not trusted. The plan and the script must be the user's own."""
    for part in OWNED_PARTS:
        check_owned(path / part, shared_gid)


def check_owned(part: Path, shared_gid: int | None = None) -> None:
    """FolderError when the ownership rule refuses `part`; a missing part is said by whoever reads it."""
    try:
        check_part(part, shared_gid)
    except OwnershipError as exc:
        raise FolderError(str(exc)) from None


def load(path: Path) -> SweepFolder:
    """A sweep folder read back; FolderError saying what is wrong with it."""
    # sweep.json names the shared group the rest is judged by, so it must be the user's own.
    check_owned(path / "sweep.json")
    data = read_json(path / "sweep.json", "the sweep's plan")
    gid = data.get("options", {}).get("shared_gid") if isinstance(data, dict) and isinstance(
        data.get("options"), dict) else None
    check_ownership(path, gid if isinstance(gid, int) and not isinstance(gid, bool) else None)
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
