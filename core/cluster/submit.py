"""Submitting a cluster sweep, rerunning what is missing, and cancelling it.

Nothing here waits for the cluster: each node type's check job and its arrays are
submitted together, the arrays depending on the check (afterok), and `submit` returns
with the folder. A busy partition, `--begin` or `--dependency` then hold them all in
Slurm's queue, where status shows them, not in tflaunch.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import slurm
from .folder import NodeType, SweepFolder, save_plan
from .preflight import CheckError, note_arrays, submit_check
from .resources import signal_lead
from .status import TrialState, trial_states

RERUN_STATES = ("failed", "lost", "cancelled")
# The resources a user names, as sbatch spells them: sweep.json's options key -> sbatch option.
RESOURCE_OPTIONS = {"time": "--time", "mem": "--mem", "cpus_per_task": "--cpus-per-task", "account": "--account",
                    "qos": "--qos"}
TASK_TARGET_S = 30.0  # with --trial-seconds: a task runs trials for about this long (Slurm adds ~1 s per task)


def sbatch_options(folder: SweepFolder, node_type: NodeType) -> list[str]:
    """What every job of this node type is submitted with (the check job too)."""
    options = folder.options
    out = [f"--chdir={options['cwd']}"] if options.get("cwd") else []
    if options.get("partition"):
        out.append(f"--partition={options['partition']}")
    if node_type.gres:
        out.append(f"--gres={node_type.gres}")
    out += [f"{flag}={options[key]}" for key, flag in RESOURCE_OPTIONS.items() if options.get(key)]
    return out + list(options.get("sbatch_args") or [])


def ending_options(options: dict[str, Any]) -> list[str]:
    """How an array's tasks may end besides their own end, as Slurm users ask for it:
    - --signal=B:USR1@S: the early warning before the time limit. B: because the trial runs
      in the batch step, not in a step of its own: without B: Slurm signals only srun's steps
      and the trial never hears it (tried on the test cluster). job.sh passes it on, and the
      trial ends cleanly, its phases kept (trial.py).
    - --requeue (where asked): a preempted task, or one whose node failed, is run again by
      Slurm under the same job id (SLURM_RESTART_COUNT), as its users expect of preemption;
      its trials with a whole result are not run again (task.py). A time limit is not
      requeued, by Slurm nor here: the same limit would end it again; `sweep resubmit
      --time` gives it more.
    - --open-mode=append: a requeued task's log keeps its earlier attempt's end (Slurm
      truncates it by default), which status reads."""
    lead = signal_lead(options)
    return ["--open-mode=append", *([f"--signal=B:USR1@{lead}"] if lead else []),
            *(["--requeue"] if options.get("requeue") else [])]


def _without_dependency(options: list[str]) -> list[str]:
    """An array waits for its check job, which carries the user's own --dependency: one
    --dependency each (a second would replace the first)."""
    out, skip = [], False
    for option in options:
        if skip:
            skip = False
        elif option in ("--dependency", "-d"):
            skip = True
        elif not option.startswith(("--dependency=", "-d")):
            out.append(option)
    return out


def trials_per_task(folder: SweepFolder, count: int) -> int:
    """How many of a node type's `count` trials each array task runs, one after another:
    --trials-per-task, or from --trial-seconds so a task lasts about TASK_TARGET_S while
    every one of --max-parallel tasks still has trials; 1 otherwise."""
    given = folder.options.get("trials_per_task")
    if isinstance(given, int) and given >= 1:
        return given
    seconds = folder.options.get("trial_seconds")
    if not isinstance(seconds, (int, float)) or seconds <= 0:
        return 1
    parallel = folder.options.get("max_parallel") or count
    return max(1, min(math.ceil(TASK_TARGET_S / seconds), math.ceil(count / parallel)))


def _tasks(indices: list[int], per_task: int) -> list[list[int]]:
    """A node type's trials in their order, `per_task` to a task (its shuffle unchanged)."""
    return [indices[i:i + per_task] for i in range(0, len(indices), per_task)]


def submit(folder: SweepFolder, on_wait: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
           indices: list[int] | None = None) -> dict[str, str]:
    """Each node type's check job and its arrays (of `indices`, default all), at once:
    {node type: job ids}. SlurmError when sbatch refuses; `stop` (the app's Cancel) is asked
    between node types, and true cancels what was submitted (CheckError)."""
    wanted = set(folder.indices if indices is None else indices)
    by_type: dict[str, list[int]] = {}
    for trial in sorted(folder.trials(), key=lambda t: (t.node_type, t.number)):
        if trial.index in wanted:
            by_type.setdefault(trial.node_type, []).append(trial.index)
    limit = slurm.max_array_size()
    jobs = {}
    checks: list[str] = []
    arrays: list[str] = []
    for node_type in folder.node_types:
        mine = by_type.get(node_type.name)
        if not mine:
            continue
        if stop is not None and stop():
            cancel(folder)
            raise CheckError(f"cancelled while submitting; the jobs submitted meanwhile were cancelled "
                             f"({folder.path}).")
        options = sbatch_options(folder, node_type)
        tasks = _tasks(mine, trials_per_task(folder, len(mine)))
        ids: list[str] = []
        try:
            check = submit_check(folder, node_type, options)
            checks.append(check)
            if on_wait is not None:
                on_wait(f"{node_type.name}: check job {check}, then {len(mine)} trials in {len(tasks)} array task"
                        f"{'s' if len(tasks) != 1 else ''} once it has passed")
            for chunk in _chunks(tasks, limit):
                ids.append(_submit_array(folder, node_type, chunk, check, options))
                arrays.append(ids[-1])
        except slurm.SlurmError as exc:
            # Half a submission runs nothing anyone asked for: what went in goes again, said.
            with contextlib.suppress(slurm.SlurmError):
                slurm.cancel(checks + arrays)
            if arrays:
                folder.add_cancelled(arrays)
            raise slurm.SlurmError(f"{exc} Nothing of this submission runs: its jobs submitted before that "
                                   "were cancelled." if checks else str(exc)) from None
        note_arrays(folder, node_type, ids)
        jobs[node_type.name] = ", ".join(ids)
    return jobs


def _submit_array(folder: SweepFolder, node_type: NodeType, chunk: list[list[int]], check: str,
                  options: list[str]) -> str:
    """One array of tasks (line N of its list in tasks/: the trials task N runs), waiting for
    the node type's check job; recorded in jobs.json. Its job id."""
    name = f"{node_type.name}-{time.strftime('%Y%m%d-%H%M%S')}-{len(folder.jobs()['submitted'])}.tasks"
    (folder.path / "tasks" / name).write_text("".join(" ".join(map(str, t)) + "\n" for t in chunk), encoding="utf-8")
    job_name = folder.options.get("job_name") or f"tflaunch-{folder.id}-{node_type.name}"
    job = slurm.submit(str(folder.script_path), list(range(len(chunk))),
                       [f"--job-name={job_name}", f"--output={slurm.output_pattern(folder.path / 'logs', '%A_%a.out')}",
                        f"--error={slurm.output_pattern(folder.path / 'logs', '%A_%a.err')}",
                        f"--dependency=afterok:{check}", *ending_options(folder.options),
                        *_without_dependency(options)],
                       folder.options.get("max_parallel"), f"submit the {node_type.name} trials", script_args=[name])
    folder.add_submission(job, node_type.name, [i for t in chunk for i in t], tasks=chunk, check=check)
    return job


def _chunks(tasks: list[list[int]], limit: int) -> list[list[list[int]]]:
    """Tasks in arrays of at most `limit` (the cluster's MaxArraySize)."""
    return [tasks[i:i + limit] for i in range(0, len(tasks), limit)]


def resubmit(folder: SweepFolder, states: list[TrialState] | None = None, resources: dict[str, str] | None = None,
             on_wait: Callable[[str], None] | None = None) -> tuple[list[int], dict[str, str]]:
    """Rerun every failed, lost or cancelled trial, each node type checked again first (a
    node that lost the folder fails its check, not seven trials): (indices, {node type: job
    ids}). `resources` (--time, --mem, ...) replace the sweep's from now on. The earlier
    results are kept aside in results/replaced/, not deleted."""
    states = trial_states(folder) if states is None else states
    again = [s.index for s in states if s.state in RERUN_STATES]
    if not again:
        return [], {}
    if resources:
        signal_lead({**folder.options, **resources})  # a shorter --time than the lead given: ValueError
        folder.options.update(resources)
        save_plan(folder)
    aside = folder.path / "results" / "replaced"
    for index in again:
        _set_aside(folder.result_path(index), aside, time.strftime("%Y%m%d-%H%M%S"))
        folder.exit_path(index).unlink(missing_ok=True)
    return again, submit(folder, on_wait, indices=again)


def _set_aside(path: Path, aside: Path, stamp: str) -> None:
    if path.exists():
        aside.mkdir(exist_ok=True)
        path.rename(aside / f"{path.stem}-{stamp}.json")


def cancel(folder: SweepFolder) -> list[str]:
    """scancel every job of the sweep still known to Slurm (its check jobs too); the job ids cancelled."""
    jobs = folder.jobs()
    live = [s["job_id"] for s in jobs["submitted"] if s["job_id"] not in jobs["cancelled"]]
    checks = sorted({s["check"] for s in jobs["submitted"] if s.get("check") and s["job_id"] in live})
    with contextlib.suppress(slurm.SlurmError):  # a check job long ended (and forgotten) is no error
        slurm.cancel(checks)
    slurm.cancel(live)
    folder.add_cancelled(live)
    return live
