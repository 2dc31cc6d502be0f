"""`tflaunch trial DIR INDEX`: one trial of a cluster sweep, run on the node Slurm chose.

The trial is a fresh process exactly as on the workstation: the same launch check, the
same environment builder and probe (ProbeSession through the command line's driver),
GPU memory sampled the same way. Its runs are written to results/NNNN.json whole, in
the history's own row shape (store/run_rows.py), with the node they ran on.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from ..run.driver import run_sessions
from ..run.gpus.nvml import GpuMemorySampler
from ..run.launch_check import launch_check
from ..run.record import Failure, RunRecord, RunStatus
from ..run.session import ProbeSession
from ..run.trial_info import TrialInfo
from ..settings.caches import PACKS_ENV
from ..store.run_rows import run_data
from .endings import EARLY_WARNING, early_warning_words
from .folder import FolderError, SweepFolder, TrialFile, load, write_json
from .node import node_facts

RESULT_FORMAT = "tflaunch-cluster-result"
RESULT_VERSION = 1
_PR_SET_PDEATHSIG = 1


def trial_info(trial: TrialFile, instance: int, node: dict[str, Any]) -> TrialInfo:
    """What the history stores of the trial a run was (stored_values.stored_trial reads it back)."""
    return TrialInfo(trial.candidate, trial.warmup, trial.number, instance, trial.index, trial.node_type, node)


# Slurm's signals as they came: SIGTERM (scancel, the time limit, preemption, the batch shell's
# end), or SIGUSR1, the early warning before the time limit (sbatch --signal=B:USR1, submit.py).
ENDED_BY: list[int] = []


def ended_by_slurm(signum: int, frame: FrameType | None) -> None:
    # The driver's KeyboardInterrupt path ends the children it started (their process groups)
    # instead of leaving them on the node. Only the first signal interrupts: Slurm's TERM comes
    # twice (job.sh passes it on, slurmstepd sends it to every process) and the limit's TERM
    # follows the warning; a second interrupt would cut the writing of what the first kept.
    ENDED_BY.append(signum)
    if len(ENDED_BY) == 1:
        raise KeyboardInterrupt


@contextlib.contextmanager
def slurm_signals() -> Iterator[None]:
    """Slurm's SIGTERM and its early warning (SIGUSR1) end what runs, their cause kept."""
    previous = {s: signal.signal(s, ended_by_slurm) for s in (signal.SIGTERM, signal.SIGUSR1)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def warned() -> bool:
    """Ended at Slurm's early warning, before any SIGTERM."""
    return bool(ENDED_BY) and ENDED_BY[0] == signal.SIGUSR1


def ended_by() -> str:
    """How this trial process was ended early, in the words its task's log keeps."""
    if warned():
        return f"{EARLY_WARNING} (Slurm's SIGUSR1 before the job's time limit)"
    if ENDED_BY:
        return ("ended by SIGTERM from Slurm (its time limit, scancel, preemption or the batch shell's end: "
                "`tflaunch sweep status` says which)")
    return "interrupted (Ctrl+C)"


def end_with_batch_step() -> None:
    """SIGTERM when the shell that started this trial dies (job.sh killed with -9, a batch
    step torn down): without it the trial, outliving its task, ran on beside the next one.
    SIGTERM, not SIGKILL, so the children it started are ended with it (terminated). A
    shell gone before this ran (TFLAUNCH_JOB_SHELL, job.sh's pid, is no longer the parent)
    ends the trial at once."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    shell = os.environ.get("TFLAUNCH_JOB_SHELL")
    if shell is not None and shell != str(os.getppid()):
        os.kill(os.getpid(), signal.SIGTERM)


def run_trial(path: Path, index: int) -> tuple[int, str]:
    """Run trial `index` of the sweep at `path`: (exit status, a line for the task's log).
    0: measured, every run ok; 1: measured or refused, not ok (the result says why); 2: no
    result could be written; 130: cancelled."""
    try:
        folder = load(path)
        trial = folder.trial(index)
    except FolderError as exc:
        return 2, str(exc)
    node = node_facts()
    started = time.time()
    problems = launch_check(trial.config)
    if problems:
        reason = f"{problems[0].field}: {problems[0].message}"
        return _write(folder, trial, node, started, [], f"refused on {node['host']}: {reason}"), \
            f"trial {index} refused on this node: {reason}"
    gpus = GpuMemorySampler()
    try:
        with slurm_signals(), shared_packs(folder.path):
            sessions = [ProbeSession(trial.config) for _ in range(trial.instances)]
            try:
                records = run_sessions(sessions, None, gpus)
            except KeyboardInterrupt:
                if not ENDED_BY:
                    raise
                # Slurm's SIGTERM or its warning: the driver ended the children; each run keeps the phases it reached.
                records = [s.record for s in sessions]
                for record in records:
                    if record.finished_at is None:
                        record.finish(None, cancelled=True)
    finally:
        gpus.close()
    if any(r.status is RunStatus.CANCELLED for r in records):
        if not ENDED_BY:
            return 130, f"trial {index} {ended_by()}; no result written"
        # Slurm ended it (time limit, scancel, preemption) or warned of its time limit: the phases its
        # runs had measured are kept, as a result whose runs say they were cancelled and, at the
        # warning, why (the history shows a run's failure); resubmit runs the trial again.
        cause = EARLY_WARNING if warned() else None
        for record in records:
            if cause and record.status is RunStatus.CANCELLED:
                record.failure = Failure("time limit", early_warning_words(folder.path))
        kept = _write(folder, trial, node, started, records, None, cause) != 2
        return 130, f"trial {index} {ended_by()}; " + ("the phases it had measured are kept in its result" if kept
                                                        else "no result written")
    status = _write(folder, trial, node, started, records, None)
    return status, f"trial {index} ({trial.candidate}): " + "; ".join(r.status_line for r in records)


@contextlib.contextmanager
def shared_packs(sweep: Path) -> Iterator[Path]:
    """The sweep's cache packs on its shared folder (packs/), unless TFLAUNCH_PACKS_DIR names
    others: a pack's key is its node's stack, so each node type fills one, and the trials after
    the first on that type start with it."""
    given = os.environ.get(PACKS_ENV)
    root = Path(given) if given else sweep / "packs"
    os.environ[PACKS_ENV] = str(root)
    try:
        yield root
    finally:
        if given is None:
            os.environ.pop(PACKS_ENV, None)


def _write(folder: SweepFolder, trial: TrialFile, node: dict[str, Any], started: float,
           records: list[RunRecord], refused: str | None, cause: str | None = None) -> int:
    """results/NNNN.json; `cause`: why its runs were cut short, where the trial knows (the warning)."""
    result = {"format": RESULT_FORMAT, "version": RESULT_VERSION, "sweep": folder.id, "index": trial.index,
              "node": node, "started": started, "ended": time.time(), "refused": refused, "cause": cause,
              "runs": [run_data(r, "cluster", trial_info(trial, i, node)) for i, r in enumerate(records)]}
    try:
        write_json(folder.result_path(trial.index), result)
    except OSError as exc:
        print(f"tflaunch: the result of trial {trial.index} cannot be written to {folder.result_path(trial.index)} "
              f"({exc.strerror}); the sweep folder must be writable from the nodes.")
        return 2
    return 0 if records and all(r.status is RunStatus.OK for r in records) else 1
