"""Where each trial of a cluster sweep stands, from the files and squeue (sacct where it
works): pending, running, done, failed, cancelled or lost.

- done: its result file says every run was ok.
- failed: its result says a run failed or the node refused it; or its task ended with a
  non-zero status and no result (exits/NNNN, written by job.sh), or sacct says it failed.
- pending / running: squeue still holds its task.
- cancelled: its job was cancelled (`tflaunch sweep cancel`) before a result came.
- lost: none of these: never submitted, or its task vanished without a word (a node that
  died, a job killed from outside). `tflaunch sweep resubmit` runs failed and lost trials.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from . import slurm
from .folder import FolderError, SweepFolder
from .results import TrialResult, read_result

STATES = ("pending", "running", "done", "failed", "cancelled", "lost")


@dataclass
class TrialState:
    index: int
    node_type: str
    candidate: str
    state: str
    detail: str = ""  # a failure's reason, a pending task's wait, a damaged file
    result: TrialResult | None = None


def trial_states(folder: SweepFolder, ask_slurm: bool = True) -> list[TrialState]:
    """Every trial's state. ask_slurm=False (no Slurm here) leaves the queue out: a trial
    without a result is then "lost" unless its task said how it ended."""
    jobs = folder.jobs()
    job_ids = [s["job_id"] for s in jobs["submitted"]]
    # An array's task N runs trial offset + N (each node type's array counts from 0).
    offsets = {s["job_id"]: int(s.get("offset", 0)) for s in jobs["submitted"]}
    queued = {offsets.get(t.job_id, 0) + t.index: t for t in (slurm.queue(job_ids) if ask_slurm else [])
              if t.index >= 0}
    accounted = {offsets.get(t.job_id, 0) + t.index: t
                 for t in (slurm.accounting(job_ids) if ask_slurm else None) or []}
    cancelled = set(jobs["cancelled"])
    submitted_by = {i: s["job_id"] for s in jobs["submitted"] for i in s["indices"]}  # the latest submission
    logs = {i: f"{s['job_id']}_{i - int(s.get('offset', 0))}" for s in jobs["submitted"] for i in s["indices"]}
    states = []
    for trial in folder.trials():
        i = trial.index
        state = TrialState(i, trial.node_type, trial.candidate, "lost")
        try:
            state.result = read_result(folder, trial)
        except FolderError as exc:
            state.state, state.detail = "failed", str(exc)
            states.append(state)
            continue
        if state.result is not None:
            state.state = "done" if state.result.ok else "failed"
            state.detail = "" if state.result.ok else (state.result.reason or "failed")
        elif i in queued and queued[i].job_id == submitted_by.get(i):
            task = queued[i]
            state.state = "pending" if task.state in slurm.PENDING_STATES else "running"
            # squeue gives a running task its array's reason too (JobArrayTaskLimit): a wait only for one pending
            state.detail = "" if state.state == "running" or task.reason in ("", "None") else task.reason
        elif (status := _exit_status(folder, i)) not in (None, "0"):
            state.state, state.detail = "failed", f"its task ended with status {status} and wrote no result " \
                                                  f"(see {folder.path / 'logs'}/{logs.get(i, '?')}.err)"
        elif submitted_by.get(i) in cancelled:
            state.state, state.detail = "cancelled", "its job was cancelled"
        elif i in accounted and accounted[i].state not in ("COMPLETED", ""):
            state.state, state.detail = "failed", f"Slurm says {accounted[i].state}"
        elif i not in submitted_by:
            state.detail = "never submitted"
        else:
            state.detail = "its task left no result and Slurm no longer holds it"
        states.append(state)
    return states


def states_from_files_if_need_be(folder: SweepFolder) -> tuple[list[TrialState], str | None]:
    """Every trial's state and, where Slurm cannot be asked (a machine that sees the folder
    but not the cluster, a controller down), the files' states alone and why: merging and
    showing results need only the files; a trial without a result then shows as not done."""
    try:
        return trial_states(folder), None
    except slurm.SlurmError as exc:
        return trial_states(folder, ask_slurm=False), (f"{exc} Shown from the folder's files alone: a trial "
                                                       "still queued or running shows as lost.")


def _exit_status(folder: SweepFolder, index: int) -> str | None:
    try:
        return folder.exit_path(index).read_text(encoding="utf-8", errors="replace").strip()[:12] or None
    except OSError:
        return None


def counts(states: list[TrialState]) -> dict[str, int]:
    found = Counter(s.state for s in states)
    return {state: found[state] for state in STATES if found[state]}


def summary_line(states: list[TrialState]) -> str:
    """"12 trials: 9 done, 1 failed, 2 running"."""
    return f"{len(states)} trials: " + ", ".join(f"{n} {state}" for state, n in counts(states).items())


