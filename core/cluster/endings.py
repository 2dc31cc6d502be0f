"""How a trial's task ended when it left no result: the reason, from what the cluster left.

Three witnesses, each where it exists: the task's log (slurmstepd writes "*** JOB 12 ON n1
CANCELLED AT ... DUE TO TIME LIMIT ***" into it), the exit status job.sh wrote, and sacct
where the cluster keeps accounting ("CANCELLED by 1000", TIMEOUT, OUT_OF_MEMORY). A trial
with none of them is lost, and its detail says what that suggests.
"""

from __future__ import annotations

import pwd
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from .bounded_read import UnreadableFileError, read_bounded
from .ownership import OwnershipError

LOG_TAIL = 64 << 10
SIGNALLED = ("130", "137", "143")  # the trial ended by a signal (job.sh passes Slurm's TERM on)
EARLY_WARNING = "time limit near: ended at the early warning"  # in a result, a run's failure and the task's log
WARNED_EXIT = "warned"  # exits/NNNN of a trial the early warning kept from starting (task.py)
_STEPD = re.compile(r"\*\*\* (?:JOB|STEP) [\w.]+ ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))?(?: \*\*\*|$)",
                    re.MULTILINE)
_OOM = re.compile(r"oom[-_ ]kill|out of memory|exceeded (?:job|step) memory limit", re.IGNORECASE)


@dataclass(frozen=True)
class Ending:
    state: str  # failed, cancelled or lost
    detail: str


def _resubmit(folder: Path, option: str = "") -> str:
    return f"`tflaunch sweep resubmit {shlex.quote(str(folder))}{option}`"


def from_log(text: str, folder: Path) -> Ending | None:
    """What slurmstepd said of the task's end, or the kernel's out-of-memory killer."""
    if _OOM.search(text):
        return Ending("failed", "it ran out of memory (the task's log says so): give it more with "
                      + _resubmit(folder, " --mem=16G") + " or fewer instances")
    found = _STEPD.findall(text)
    if not found:
        return None
    host, at, cause = found[-1]
    cause = cause.strip()
    if cause == "TIME LIMIT":
        return Ending("failed", f"Slurm ended it at its time limit on {host} at {at}: give it more time with "
                      + _resubmit(folder, " --time=01:00:00"))
    if cause == "NODE FAILURE":
        return Ending("lost", f"its node {host} failed at {at}; {_resubmit(folder)} runs it again")
    if cause:
        return Ending("cancelled", f"Slurm cancelled it on {host} at {at} due to {cause.lower()}; "
                      f"{_resubmit(folder)} runs it again")
    return Ending("cancelled", f"cancelled on {host} at {at} from outside tflaunch (scancel by you or an "
                  f"administrator); {_resubmit(folder)} runs it again")


def early_warning_words(folder: Path, lead: int | None = None, of: str = "") -> str:
    """Why a trial ended at Slurm's early warning (--signal-lead), and what to do."""
    before = f"{lead} s before" if lead else "before"
    return (f"{EARLY_WARNING}{of} (Slurm's SIGUSR1, asked for {before} the job's time limit): give it more time "
            "with " + _resubmit(folder, " --time=01:00:00"))


def early_warning(folder: Path, lead: int | None, started: bool) -> Ending:
    """A trial ended at the early warning (its phases kept), or one the warning kept from starting."""
    if started:
        return Ending("failed", early_warning_words(folder, lead) + "; the phases it had measured are kept and merged")
    return Ending("failed", early_warning_words(folder, lead, " of its task, before this trial started"))


def from_accounting(state: str, folder: Path) -> Ending | None:
    """sacct's State: TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, CANCELLED by UID, PREEMPTED, FAILED..."""
    words = state.split()
    if not words or words[0] in ("COMPLETED", "PENDING", "RUNNING"):
        return None
    name = words[0]
    if name == "TIMEOUT":
        return Ending("failed", "Slurm ended it at its time limit (sacct: TIMEOUT): give it more time with "
                      + _resubmit(folder, " --time=01:00:00"))
    if name == "OUT_OF_MEMORY":
        return Ending("failed", "it ran out of memory (sacct: OUT_OF_MEMORY): give it more with "
                      + _resubmit(folder, " --mem=16G"))
    if name in ("NODE_FAIL", "BOOT_FAIL"):
        return Ending("lost", f"its node failed (sacct: {name}); {_resubmit(folder)} runs it again")
    if name == "CANCELLED":
        who = _user(words[-1]) if len(words) >= 3 and words[-2].lower() == "by" else "someone"
        return Ending("cancelled", f"cancelled by {who} (sacct); {_resubmit(folder)} runs it again")
    if name == "PREEMPTED":
        return Ending("cancelled", f"preempted by a job of higher priority (sacct); {_resubmit(folder)} runs it again")
    return Ending("failed", f"Slurm says {state}")


def _user(uid: str) -> str:
    try:
        return pwd.getpwuid(int(uid)).pw_name
    except (KeyError, ValueError):
        return f"uid {uid}"


def read_log(path: Path, shared_gid: int | None) -> str | None:
    """The end of a task's log; None when there is none (or none tflaunch may read)."""
    try:
        return read_bounded(path, LOG_TAIL, shared_gid, tail=True).decode("utf-8", "replace")
    except (OSError, OwnershipError, UnreadableFileError):
        return None
