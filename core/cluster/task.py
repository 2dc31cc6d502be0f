"""One array task's trials (`tflaunch trial DIR INDEX...`), run one after another.

A task Slurm requeued (preempted, its node failed, `scontrol requeue`: with --requeue, or
by the cluster's own default) starts again from job.sh under the same job id, and
SLURM_RESTART_COUNT says it is an attempt after the first. It then runs only what its
earlier attempt did not finish: a trial with a whole result keeps it (measured once, not
twice), and one cut short is run again, its earlier result set aside in results/replaced/,
so the folder holds one result per trial and a merge stores each run once (merge.py
replaces what it stored of the earlier attempt). At Slurm's early warning the running trial
ends with its phases kept, and the trials after it are not started: exits/ says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..store.atomic import atomic_write
from .endings import WARNED_EXIT
from .folder import FolderError, load, name
from .results import read_result
from .trial import run_trial, warned

RESTART_ENV = "SLURM_RESTART_COUNT"


def restart_count() -> int:
    """How many times Slurm has requeued this task (0: its first attempt)."""
    text = os.environ.get(RESTART_ENV, "")
    return int(text) if text.isascii() and text.isdigit() else 0


def run_trials(path: Path, indices: list[int], say: Callable[[int, str], None]) -> int:
    """Run the trials of one array task one after another, each leaving its exit status in
    exits/ (job.sh writes the one this process dies in): the worst status. A cancelled
    trial (130) ends the task: the rest never ran (at the early warning: they say so)."""
    restart = restart_count()
    worst = 0
    for place, index in enumerate(indices):
        if restart and _measured_before(path, index, restart, say):
            continue
        status, line = run_trial(path, index)
        say(status, line)
        if status != 130:
            _write_exit(path, index, str(status), say)
        worst = status if status else worst
        if status == 130:
            if warned():
                for later in indices[place + 1:]:
                    _write_exit(path, later, WARNED_EXIT, say)
            break
    return worst


def _measured_before(path: Path, index: int, restart: int, say: Callable[[int, str], None]) -> bool:
    """True when an earlier attempt of this task left trial `index` a whole result. Otherwise
    what that attempt left of it (a result cut short, a damaged one, an exit status) is set
    aside or removed, and the trial runs again."""
    try:
        folder = load(path)
        trial = folder.trial(index)
    except FolderError:
        return False  # run_trial says what is wrong with the folder
    try:
        result = read_result(folder, trial)
    except FolderError:
        result = None  # damaged: set aside below, measured again
    if result is not None and not result.cut_short:
        say(0, f"trial {index}: measured before Slurm requeued this task (attempt {restart + 1}); its result is "
               "kept, not measured twice")
        return True
    folder.exit_path(index).unlink(missing_ok=True)
    earlier = folder.result_path(index)
    if os.path.lexists(earlier):
        aside = folder.path / "results" / "replaced"
        aside.mkdir(exist_ok=True)
        earlier.rename(aside / f"{name(index)}-attempt{restart}.json")
        say(0, f"trial {index}: measured again in attempt {restart + 1} of this task (Slurm requeued it); what the "
               f"earlier attempt measured is kept aside in {aside}")
    return False


def _write_exit(path: Path, index: int, status: str, say: Callable[[int, str], None]) -> None:
    try:
        atomic_write(path / "exits" / name(index), f"{status}\n".encode())
    except OSError as exc:
        say(2, f"trial {index}: its exit status cannot be written ({exc.strerror})")
