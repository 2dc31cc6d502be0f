"""The cluster's own commands, asked as a user would: sbatch, squeue, scancel, sacct.

Each call has a timeout (a hung controller must not hang tflaunch) and each failure is a
SlurmError that names the command, what Slurm said and what to do. sacct is asked only
where it works: without an accounting database it fails, and the state of a finished task
then comes from the files its task left (status.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_S = 60.0
# squeue's states of a task that has not ended (https://slurm.schedmd.com/squeue.html#SECTION_JOB-STATE-CODES)
PENDING_STATES = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD",
                  "SUSPENDED", "STOPPED", "RESIZING"}
RUNNING_STATES = {"RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT"}
_JOB_ID = re.compile(r"^(\d+)(?:;\S+)?$")
_TASK = re.compile(r"^(\d+)_(\d+)$")
_TASK_RANGE = re.compile(r"^(\d+)_\[([0-9,\-%]+)\]$")


class SlurmError(Exception):
    """A Slurm command that failed or is missing: the message says which and what to do."""


@dataclass(frozen=True)
class TaskState:
    job_id: str
    index: int  # the array task; -1 for a job that is no array (the check job)
    state: str  # as squeue or sacct spells it: PENDING, RUNNING, FAILED, CANCELLED...
    reason: str = ""  # why a task waits (Resources, Priority, ...), from squeue


ASK_ADVICE = ("Check that Slurm works in this shell (`squeue` answers; SLURM_CONF names the cluster's slurm.conf "
              "where it is not in /etc/slurm).")
SUBMIT_ADVICE = "Check the partition, --gres and --sbatch-arg values with your cluster's documentation."
# What Slurm's commands say when there is no cluster to ask (no slurm.conf, no controller).
_NO_CLUSTER = ("unable to contact slurm controller", "could not establish a configuration source",
               "no such file or directory", "zero bytes were transmitted", "connection refused",
               "unable to establish controller machine")
NO_CLUSTER_ADVICE = ("No Slurm cluster answers from this machine. On a cluster's login node, check that `squeue` "
                     "works (SLURM_CONF names its slurm.conf where it is not in /etc/slurm); to try cluster sweeps "
                     "on this workstation, start a single-node Slurm with `tflaunch cluster sandbox up` and export "
                     "the SLURM_CONF it prints.")


def _run(command: list[str], what: str, advice: str = ASK_ADVICE, nothing_if: str | None = None) -> str:
    """The command's output; SlurmError when it fails. `nothing_if`: words of a failure that
    only means there is nothing to say (an empty answer then)."""
    if shutil.which(command[0]) is None:
        raise SlurmError(f"`{command[0]}` is not on PATH, so tflaunch cannot {what}. Run tflaunch on a machine "
                         "that submits to the cluster (a login node), or load Slurm first (`module load slurm`); "
                         "with no cluster at all, `tflaunch cluster sandbox up` starts one on this machine once "
                         "Slurm is installed.")
    conf = os.environ.get("SLURM_CONF")
    if conf and not os.path.isfile(conf):
        # Slurm's own commands retry a missing slurm.conf for a minute before they say so.
        raise SlurmError(f"SLURM_CONF names {conf}, which is not a file, so tflaunch cannot {what}. "
                         + NO_CLUSTER_ADVICE)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, errors="replace",
                              check=False)
    except subprocess.TimeoutExpired:
        raise SlurmError(f"`{' '.join(command[:2])} ...` did not answer within {TIMEOUT_S:.0f} s, so tflaunch "
                         f"could not {what}. The Slurm controller may be busy or down: try again later, or ask "
                         "your cluster's administrators.") from None
    except OSError as exc:
        raise SlurmError(f"`{command[0]}` could not be started ({exc.strerror}), so tflaunch cannot {what}.") \
            from None
    if done.returncode != 0:
        if nothing_if is not None and nothing_if in done.stderr:
            return ""
        said = _said(done)
        if any(words in said.lower() for words in _NO_CLUSTER):
            advice = NO_CLUSTER_ADVICE
        raise SlurmError(f"`{' '.join(command[:2])} ...` failed: {said}. tflaunch could not {what}. " + advice)
    return done.stdout


def _said(done: subprocess.CompletedProcess[str]) -> str:
    """What the command said of its failure: every line but sbatch's `Try "sbatch --help"`,
    which follows the line that names the option it refused."""
    lines = [line.strip() for line in (done.stderr or done.stdout).splitlines()
             if line.strip() and not line.strip().startswith("Try ")]
    return ("; ".join(lines) or f"exit status {done.returncode}")[:600]


def submit(script: str, indices: Sequence[int], options: Sequence[str], max_parallel: int | None = None,
           what: str = "submit the sweep's job array", script_args: Sequence[str] = ()) -> str:
    """`sbatch --parsable --array=... SCRIPT ARGS`: the job id. The indices are sent as ranges."""
    array = array_spec(indices) + (f"%{max_parallel}" if max_parallel else "")
    out = _run(["sbatch", "--parsable", f"--array={array}", *options, script, *script_args], what, SUBMIT_ADVICE)
    return parse_job_id(out)


def submit_one(script: str, options: Sequence[str], what: str) -> str:
    """`sbatch --parsable` of a single job (the check job)."""
    return parse_job_id(_run(["sbatch", "--parsable", *options, script], what, SUBMIT_ADVICE))


def parse_job_id(out: str) -> str:
    """sbatch --parsable prints `id` or `id;cluster`."""
    line = out.strip().splitlines()[-1] if out.strip() else ""
    match = _JOB_ID.match(line)
    if not match:
        raise SlurmError(f"sbatch answered {out.strip()[:200]!r} instead of a job id; tflaunch cannot follow "
                         "the job. Check that `sbatch --parsable` works on this machine.")
    return match.group(1)


def array_spec(indices: Sequence[int]) -> str:
    """0,1,2,5,7,8 -> "0-2,5,7-8"."""
    ordered = sorted(set(indices))
    if not ordered:
        raise ValueError("an array needs at least one index")
    runs: list[list[int]] = [[ordered[0], ordered[0]]]
    for i in ordered[1:]:
        if i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    parts = [str(low) if low == high else f"{low}-{high}" for low, high in runs]
    return ",".join(parts)


def expand_indices(spec: str) -> list[int]:
    """squeue's "[3-5,8%2]" part -> [3, 4, 5, 8]."""
    out: list[int] = []
    for part in spec.split("%")[0].split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            out.extend(range(int(low), int(high or low) + 1))
    return out


def queue(job_ids: Sequence[str]) -> list[TaskState]:
    """Every task of these jobs that Slurm still holds (pending or running), one per index."""
    if not job_ids:
        return []
    # Slurm forgets a job MinJobAge (300 s by default) after it ends; squeue then refuses
    # the id outright when it knows none of those asked for: none is queued, not an error.
    out = _run(["squeue", "--noheader", "--array", f"--jobs={','.join(job_ids)}", "--format=%i|%T|%r"],
               "ask Slurm which trials are queued or running", nothing_if="Invalid job id specified")
    return parse_queue(out)


def parse_queue(out: str) -> list[TaskState]:
    tasks = []
    for line in out.splitlines():
        fields = line.strip().split("|")
        if len(fields) < 2:
            continue
        job, state, reason = fields[0], fields[1].upper(), (fields[2] if len(fields) > 2 else "")
        if match := _TASK.match(job):
            tasks.append(TaskState(match.group(1), int(match.group(2)), state, reason))
        elif match := _TASK_RANGE.match(job):  # pending tasks may still be shown as one line
            tasks.extend(TaskState(match.group(1), i, state, reason) for i in expand_indices(match.group(2)))
        elif job.isdigit():  # a job of its own (the check job): still queued, not gone
            tasks.append(TaskState(job, -1, state, reason))
    return tasks


def accounting(job_ids: Sequence[str]) -> list[TaskState] | None:
    """How each task ended, from sacct; None where accounting does not work (no slurmdbd)."""
    if not job_ids or shutil.which("sacct") is None:
        return None
    try:
        out = _run(["sacct", "--noheader", "--parsable2", "--allocations", f"--jobs={','.join(job_ids)}",
                    "--format=JobID,State"], "read the accounting")
    except SlurmError:
        return None
    tasks = []
    for line in out.splitlines():
        job, _, state = line.partition("|")
        if match := _TASK.match(job.strip()):
            tasks.append(TaskState(match.group(1), int(match.group(2)), " ".join(state.split()).upper()))
    return tasks


def output_pattern(folder: Path, name: str) -> str:
    """--output's value for a file `name` (Slurm's %A, %a, %j) in `folder`: a % of the
    folder's own is doubled, or Slurm would replace it and write the log somewhere else."""
    return f"{str(folder).replace('%', '%%')}/{name}"


def cancel(job_ids: Sequence[str], indices: Sequence[int] | None = None) -> None:
    """scancel whole jobs, or only these array indices of them."""
    if not job_ids:
        return
    targets = list(job_ids) if indices is None else [f"{j}_[{array_spec(indices)}]" for j in job_ids]
    _run(["scancel", *targets], "cancel the sweep's jobs")


DEFAULT_MAX_ARRAY_SIZE = 1001  # Slurm's default: task ids 0 to 1000


def max_array_size() -> int:
    """The cluster's MaxArraySize (task ids below it), from `scontrol show config`; Slurm's
    default where it cannot be asked."""
    if shutil.which("scontrol") is None:
        return DEFAULT_MAX_ARRAY_SIZE
    try:
        out = _run(["scontrol", "show", "config"], "read the cluster's largest array")
    except SlurmError:
        return DEFAULT_MAX_ARRAY_SIZE
    match = re.search(r"^MaxArraySize\s*=\s*(\d+)", out, re.MULTILINE)
    return max(1, int(match.group(1))) if match else DEFAULT_MAX_ARRAY_SIZE
