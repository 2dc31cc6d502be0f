"""Where each trial of a cluster sweep stands, from the files and squeue (sacct where it
works): pending, running, done, failed, cancelled, lost, or unknown without Slurm.

- done: its result file says every run was ok.
- failed: its result says a run failed or the node refused it, or that it ended at Slurm's
  early warning of the time limit (its phases kept); its node type's check found something
  missing; or its task ended without a result: at its time limit (or its warning), out of
  memory, with a non-zero status (endings.py reads the log, exits/NNNN and sacct).
- pending / running: squeue still holds its task (waiting, perhaps, for its check job), or
  holds it again: Slurm requeued it (preemption, --requeue), and its earlier attempt's
  result, cut short, is replaced when it runs.
- cancelled: its job was cancelled (`tflaunch sweep cancel`, or scancel from outside).
- lost: none of these: never submitted, its node failed, or its task vanished without a
  word. `tflaunch sweep resubmit` runs failed, cancelled and lost trials.
- unknown: Slurm cannot be asked (status and merge from the files alone) and the trial has
  no result nor any word of its end: it may still be queued or running, so a merge is not final.
"""

from __future__ import annotations

import contextlib
import shlex
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..safe_text import shown
from . import slurm
from .bounded_read import UnreadableFileError, read_bounded
from .endings import EARLY_WARNING, SIGNALLED, WARNED_EXIT, Ending, early_warning, from_accounting, from_log, read_log
from .folder import FolderError, SweepFolder, task_of
from .ownership import OwnershipError
from .preflight import check_outcome, not_shared_reason
from .resources import signal_lead
from .results import TrialResult, read_result

EXIT_CAP = 64  # "0\n": what job.sh writes

STATES = ("pending", "running", "unknown", "done", "failed", "cancelled", "lost")
UNREACHABLE = "unknown (Slurm unreachable)"
TRIAL_ENDED = "ended by SIGTERM from Slurm"  # trial.ended_by()'s words in a task's log


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
    without a result is then "lost" unless its task said how it ended. A check that failed
    cancels the arrays still waiting on it (they would wait for ever)."""
    jobs = folder.jobs()
    submitted = jobs["submitted"]
    latest = {i: s for s in submitted for i in s["indices"]}  # the latest submission of each trial
    task = {i: task_of(s)[i] for i, s in latest.items()}
    checks = sorted({s["check"] for s in submitted if s.get("check")})
    job_ids = [s["job_id"] for s in submitted]
    queue = slurm.queue([*checks, *job_ids]) if ask_slurm and job_ids else []
    queued = {(t.job_id, t.index): t for t in queue if t.index >= 0}
    check_waits = {t.job_id: t for t in queue if t.index < 0}
    accounted = {(t.job_id, t.index): t.state for t in (slurm.accounting(job_ids) if ask_slurm else None) or []}
    outcomes = {t.name: check_outcome(folder, t.name) for t in folder.node_types}
    cancelled = set(jobs["cancelled"])
    to_cancel: set[str] = set()
    states = []
    for trial in folder.trials():
        i = trial.index
        state = TrialState(i, trial.node_type, trial.candidate, "lost")
        states.append(state)
        try:
            state.result = read_result(folder, trial)
        except FolderError as exc:
            state.state, state.detail = "failed", str(exc)
            continue
        if state.result is not None:
            state.state = "done" if state.result.ok else "failed"
            state.detail = "" if state.result.ok else (state.result.reason or "failed")
            again = queued.get((latest[i]["job_id"], task[i])) if i in latest else None
            # Queued again with a result cut short: Slurm requeued its task (a first attempt has no
            # result yet). A restarted task sets that result aside as it starts (task.py); until
            # then it is running with the old result still in place, never ended.
            if state.result.cut_short and again is not None:
                if again.state in slurm.PENDING_STATES:
                    why = again.reason if again.reason not in ("", "None") else again.state.lower()
                    state.state, state.detail = "pending", (f"requeued by Slurm ({why}): the result its earlier "
                                                            "attempt cut short is replaced when it runs again")
                else:
                    state.state, state.detail = "running", ("requeued by Slurm and running again: the result its "
                                                            "earlier attempt cut short is being replaced")
            elif state.result.cause == EARLY_WARNING:
                warning = early_warning(folder.path, _lead(folder), started=True)
                state.state, state.detail = warning.state, warning.detail
            elif state.result.cut_short:  # ended by Slurm's SIGTERM: what it had measured was kept
                said = _cause(folder, latest.get(i), task.get(i), accounted)
                if said is None and _exit_status(folder, i) is None:  # job.sh, which writes every status, died first
                    said = Ending("cancelled", BATCH_SHELL_GONE + _resubmit_words(folder))
                state.state = said.state if said else "cancelled"
                state.detail = (said.detail if said else f"ended by Slurm's SIGTERM (scancel or preemption): "
                                f"{state.detail}; `tflaunch sweep resubmit` runs it again") \
                    + "; the phases it had measured are kept and merged"
            continue
        submission = latest.get(i)
        if submission is None:
            state.detail = "never submitted"
            continue
        job, waiting = submission["job_id"], queued.get((submission["job_id"], task[i]))
        outcome = outcomes.get(trial.node_type) if submission.get("check") else None
        if outcome is not None and outcome.missing:
            state.state, state.detail = "failed", outcome.reason(trial.node_type)
            if waiting is not None:
                to_cancel.add(job)
        elif waiting is not None and waiting.reason == "DependencyNeverSatisfied":  # Slurm's word: the check failed
            check = submission.get("check") or "?"
            state.state, state.detail = "failed", not_shared_reason(folder, trial.node_type, check) \
                if outcome is None else (f"its check job {check} failed on {outcome.host} (see "
                                         f"{folder.path / 'check' / trial.node_type}.log); `tflaunch sweep resubmit` "
                                         "checks again")
            to_cancel.add(job)
        elif waiting is not None:
            state.state = "pending" if waiting.state in slurm.PENDING_STATES else "running"
            state.detail = _wait(state.state, waiting.reason, submission.get("check"), check_waits)
        else:
            ending = _ending(folder, i, job, task[i], job in cancelled, accounted.get((job, task[i])))
            state.state, state.detail = ending.state, ending.detail
            if not ask_slurm and ending.state == "lost":  # no witness of an end: it may be queued or running
                state.state, state.detail = "unknown", (f"{UNREACHABLE}: no result yet; it may still be queued or "
                                                        "running (status with Slurm reachable says)")
    if to_cancel:
        with contextlib.suppress(slurm.SlurmError):
            slurm.cancel(sorted(to_cancel))
    return states


def _wait(state: str, reason: str, check: str | None, check_waits: dict[str, slurm.TaskState]) -> str:
    """Why a queued task waits: squeue's reason, or its check job's when it waits for that."""
    if state == "running" or reason in ("", "None"):  # squeue gives a running task its array's reason too
        return ""
    if reason == "Dependency" and check is not None:
        if (look := check_waits.get(check)) is not None:
            why = look.reason if look.reason not in ("", "None") else look.state.lower()
            return f"waiting for the check job {check} ({why})"
        return f"its check job {check} has ended; Slurm starts the trials next"
    return reason


BATCH_SHELL_GONE = ("its trial was ended by SIGTERM (its log says so) and its batch shell wrote no exit status: the "
                    "batch shell was killed (kill -9, the node's out-of-memory killer) or its node went away")


def _resubmit_words(folder: SweepFolder) -> str:
    return f"; `tflaunch sweep resubmit {shlex.quote(str(folder.path))}` runs it again"


def _cause(folder: SweepFolder, submission: dict[str, Any] | None, task: int | None,
           accounted: dict[tuple[str, int], str]) -> Ending | None:
    """What the task's log (or sacct) says ended it: a time limit, a cancel, a node's failure."""
    if submission is None or task is None:
        return None
    text = read_log(folder.path / "logs" / f"{submission['job_id']}_{task}.err", folder.shared_gid)
    said = from_log(text, folder.path) if text else None
    state = accounted.get((submission["job_id"], task))
    return said or (from_accounting(state, folder.path) if state else None)


def _ending(folder: SweepFolder, index: int, job: str, task: int, by_tflaunch: bool, accounted: str | None) -> Ending:
    """How a trial's task ended, though it left no result."""
    status = _exit_status(folder, index)
    if isinstance(status, Ending):
        return status
    if status is not None and status.startswith("setup:"):
        return _setup_failed(folder, status, folder.path / "logs" / f"{job}_{task}.err")
    if status == WARNED_EXIT:
        return early_warning(folder.path, _lead(folder), started=False)
    if by_tflaunch and status in (None, *SIGNALLED):
        return Ending("cancelled", "its job was cancelled (`tflaunch sweep cancel`)")
    log = folder.path / "logs" / f"{job}_{task}.err"
    text = read_log(log, folder.shared_gid)
    said = from_log(text, folder.path) if text else None
    if said is None and status is None and text and TRIAL_ENDED in text:
        # The trial said it was ended, and job.sh, which writes every status, wrote none: it died first.
        said = Ending("cancelled", BATCH_SHELL_GONE + _resubmit_words(folder))
    if said is None and status in (None, *SIGNALLED) and text and EARLY_WARNING in text:
        said = early_warning(folder.path, _lead(folder), started=False)  # warned before its runs had begun
    said = said or (from_accounting(accounted, folder.path) if accounted else None)
    if said is not None:
        return said
    if status not in (None, "0"):
        return Ending("failed", f"its task ended with status {status} and wrote no result (see {log})")
    if text is None:
        return Ending("lost", f"its task left no result, no exit status and no log ({log}), and Slurm no longer "
                      "holds it: the node may not see the folder, or it died")
    return Ending("lost", "its task left no result and Slurm no longer holds it")


def _lead(folder: SweepFolder) -> int | None:
    """The early warning's lead the sweep's tasks asked for, for its words."""
    try:
        return signal_lead(folder.options)
    except ValueError:
        return None


def states_from_files_if_need_be(folder: SweepFolder) -> tuple[list[TrialState], str | None]:
    """Every trial's state and, where Slurm cannot be asked (a machine that sees the folder
    but not the cluster, a controller down), the files' states alone and why: merging and
    showing results need only the files; a trial without a result then shows as not done."""
    try:
        return trial_states(folder), None
    except slurm.SlurmError as exc:
        return trial_states(folder, ask_slurm=False), (f"{exc} Shown from the folder's files alone: a trial "
                                                       f"without a result or an end shows as {UNREACHABLE}.")


def _exit_status(folder: SweepFolder, index: int) -> str | Ending | None:
    """The status job.sh wrote; None without one; an Ending when the file is refused."""
    try:
        text = read_bounded(folder.exit_path(index), EXIT_CAP, folder.shared_gid).decode("ascii", "replace")
    except FileNotFoundError:
        return None
    except (OwnershipError, UnreadableFileError) as exc:
        return Ending("failed", f"its exit status is not used: {exc}")
    except OSError:
        return None
    return text.strip()[:40] or None


def _setup_failed(folder: SweepFolder, status: str, log: Path) -> Ending:
    """job.sh's `setup:N:STATUS`: the --setup line that failed, its status and its last words."""
    _, number, code = (status.split(":") + ["", ""])[:3]
    lines = [str(line) for line in folder.options.get("setup") or []]
    line = lines[int(number) - 1] if number.isascii() and number.isdigit() and 0 < int(number) <= len(lines) else "?"
    text = read_log(log, folder.shared_gid) or ""
    said = [t for t in text.splitlines() if t.strip() and not t.startswith("tflaunch: setup line")][-3:]
    output = f"; it said: {shown(' | '.join(said), 400)}" if said else f" (its output: {log})"
    return Ending("failed", f"its setup line {number} `{shown(line, 200)}` failed with status {shown(code, 12)}"
                  f"{output}. Its trials did not run: correct the line (or the node's environment), then "
                  f"`tflaunch sweep resubmit {shlex.quote(str(folder.path))}`")


def still_running(states: list[TrialState]) -> str | None:
    """"2 running, 3 pending (trials 4, 7, 9, ...)"; None when nothing is queued or running."""
    waiting = [s for s in states if s.state in ("pending", "running", "unknown")]
    if not waiting:
        return None
    found = Counter(s.state for s in waiting)
    shown = ", ".join(str(s.index) for s in waiting[:8]) + (", ..." if len(waiting) > 8 else "")
    plural = "s" if len(waiting) > 1 else ""
    return ", ".join(f"{found[k]} {k}" for k in ("running", "pending", "unknown") if found[k]) \
        + f" (trial{plural} {shown})"


def counts(states: list[TrialState]) -> dict[str, int]:
    found = Counter(s.state for s in states)
    return {state: found[state] for state in STATES if found[state]}


def summary_line(states: list[TrialState]) -> str:
    """"12 trials: 9 done, 1 failed, 2 running"."""
    return f"{len(states)} trials: " + ", ".join(f"{n} {state}" for state, n in counts(states).items())


