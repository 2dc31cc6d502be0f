"""Submitting a cluster sweep, rerunning what is missing, and cancelling it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from . import slurm
from .folder import NodeType, SweepFolder
from .preflight import CheckError, check_nodes
from .status import TrialState, trial_states

RERUN_STATES = ("failed", "lost", "cancelled")
CHECK_TIMEOUT_S = 600.0  # the check job's longest wait for a node, unless told


def sbatch_options(folder: SweepFolder, node_type: NodeType) -> list[str]:
    """What every job of this node type is submitted with (the check job too)."""
    options = folder.options
    out = [f"--chdir={options['cwd']}"] if options.get("cwd") else []
    if options.get("partition"):
        out.append(f"--partition={options['partition']}")
    if node_type.gres:
        out.append(f"--gres={node_type.gres}")
    return out + list(options.get("sbatch_args") or [])


def submit_arrays(folder: SweepFolder, indices: list[int] | None = None) -> dict[str, str]:
    """The arrays of each node type (of `indices`, default all): {node type: job ids}.

    A node type's array counts from its first trial (job.sh's argument). One whose tasks
    would pass the cluster's MaxArraySize is split into several arrays, each counting from
    its own first trial; each then has its own --max-parallel."""
    wanted = set(folder.indices if indices is None else indices)
    by_type: dict[str, list[int]] = {}
    for trial in folder.trials():
        if trial.index in wanted:
            by_type.setdefault(trial.node_type, []).append(trial.index)
    limit = slurm.max_array_size()
    jobs = {}
    for node_type in folder.node_types:
        mine = by_type.get(node_type.name)
        if not mine:
            continue
        logs = folder.path / "logs"
        ids = []
        for chunk in _chunks(sorted(mine), limit):
            offset = chunk[0]
            job = slurm.submit(str(folder.script_path), [i - offset for i in chunk],
                               [f"--job-name=tflaunch-{folder.id}-{node_type.name}",
                                f"--output={slurm.output_pattern(logs, '%A_%a.out')}",
                                f"--error={slurm.output_pattern(logs, '%A_%a.err')}",
                                *sbatch_options(folder, node_type)],
                               folder.options.get("max_parallel"), f"submit the {node_type.name} trials",
                               script_args=[str(offset)])
            folder.add_submission(job, node_type.name, chunk, offset)
            ids.append(job)
        jobs[node_type.name] = ", ".join(ids)
    return jobs


def _chunks(indices: list[int], limit: int) -> list[list[int]]:
    """Sorted indices in runs whose task ids (index - the run's first) stay below `limit`."""
    chunks: list[list[int]] = []
    for i in indices:
        if chunks and i - chunks[-1][0] < limit:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


def submit(folder: SweepFolder, check_timeout: float, on_wait: Callable[[str], None] | None = None,
           stop: Callable[[], bool] | None = None) -> dict[str, str]:
    """Check every node type, then submit its arrays: {node type: job ids}. CheckError or
    SlurmError before anything of the sweep itself runs. `stop` (the app's Cancel) is asked
    between the steps and while a check job waits; true ends the submission, CheckError."""
    check_nodes(folder, lambda t: sbatch_options(folder, t), check_timeout, on_wait, stop)
    if stop is not None and stop():
        raise CheckError(f"cancelled after the check; nothing was submitted (the folder {folder.path} stays, unused).")
    if on_wait is not None:
        on_wait(f"submitting {len(folder.indices)} trials, one job array per node type")
    jobs = submit_arrays(folder)
    if stop is not None and stop():  # asked while sbatch answered: what was submitted goes again
        cancel(folder)
        raise CheckError(f"cancelled while submitting; the jobs submitted meanwhile were cancelled ({folder.path}).")
    return jobs


def resubmit(folder: SweepFolder, states: list[TrialState] | None = None, check_timeout: float = CHECK_TIMEOUT_S,
             on_wait: Callable[[str], None] | None = None) -> tuple[list[int], dict[str, str]]:
    """Rerun every failed, lost or cancelled trial: (indices, {node type: job ids}). Their
    earlier results are kept aside in results/replaced/, not deleted. A sweep whose check
    failed (nothing of it was ever submitted) is checked again first."""
    states = trial_states(folder) if states is None else states
    again = [s.index for s in states if s.state in RERUN_STATES]
    if not again:
        return [], {}
    if not folder.jobs()["submitted"]:
        check_nodes(folder, lambda t: sbatch_options(folder, t), check_timeout, on_wait)
    aside = folder.path / "results" / "replaced"
    for index in again:
        _set_aside(folder.result_path(index), aside, time.strftime("%Y%m%d-%H%M%S"))
        folder.exit_path(index).unlink(missing_ok=True)
    return again, submit_arrays(folder, again)


def _set_aside(path: Path, aside: Path, stamp: str) -> None:
    if path.exists():
        aside.mkdir(exist_ok=True)
        path.rename(aside / f"{path.stem}-{stamp}.json")


def cancel(folder: SweepFolder) -> list[str]:
    """scancel every job of the sweep still known to Slurm; the job ids cancelled."""
    jobs = folder.jobs()
    live = [s["job_id"] for s in jobs["submitted"] if s["job_id"] not in jobs["cancelled"]]
    slurm.cancel(live)
    folder.add_cancelled(live)
    return live
