"""Preemption and time limits as Slurm users expect them (issue 43, item 7), on the real
test cluster: the early warning before the time limit (sbatch --signal=B:USR1@S) ends a
trial cleanly with its phases kept and its cause said, and a task Slurm requeues runs
again, measuring only what its earlier attempt had not finished, each run merged once.

Before: job.sh asked for no warning and had no USR1 trap (the signal killed the batch
shell, and the trial said "ended by SIGTERM"), and a requeued task measured its finished
trials a second time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tflaunch.core.cluster.folder import load
from tflaunch.core.paths import history_path
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.store.history import History

from ..builders import fake_python
from ..fake_child import CHILD_ENV, MARKER_ENV
from .cluster_tools import leftovers, settle, status, tflaunch

EARLY_WARNING = "time limit near: ended at the early warning"


def _submit(cwd: Path, *args: str) -> Path:
    done = tflaunch("sweep", "--on", "slurm", "--model", "sample:mlp", "--vary", "intra=2", "--repeat", "1",
                    "--warmup", "0", "--timeout", "120", *args, cwd=cwd, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.strip().splitlines()[-1])


def _in_its_load(marker: str) -> None:
    """Until a hanging run is in its load (its helper, the marker in argv, is up) and the
    phases it reported before it were read."""
    deadline = time.monotonic() + 120
    while not any(marker in " ".join(p.cmdline()) for p in leftovers(marker)):
        assert time.monotonic() < deadline, "the hanging run never reached its load"
        time.sleep(0.2)
    time.sleep(1)


def _none_left(marker: str, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while leftovers(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not leftovers(marker)


def _runs() -> list[RunRecord]:
    history = History(history_path())
    return [history.load(s.id) for s in history.list_runs()]


def _measured(run: RunRecord) -> set[str]:
    return {name for name, phase in run.phases.items() if phase.duration is not None}


def _check_warned(folder: Path, marker: str, lead: str) -> None:
    """The trial that ran ended at the warning with its words and phases; the one after it
    in the task was not started and says so; nothing of them is left on the node."""
    settled = settle(folder, timeout=240)
    assert _none_left(marker), "a trial's children outlived the warning"
    logs = "".join(p.read_text(errors="replace") for p in (folder / "logs").glob("*.err"))
    assert EARLY_WARNING in logs and "the phases it had measured are kept in its result" in logs, logs[-2000:]
    assert "TIME LIMIT" not in logs, "it ended at the warning, before Slurm's limit"
    cut, unstarted = sorted(settled["trials"], key=lambda t: "before this trial started" in t["detail"])
    assert cut["state"] == "failed" and cut["detail"].startswith(f"{EARLY_WARNING} (Slurm's SIGUSR1, asked for "
                                                                f"{lead} s before the job's time limit)"), cut
    assert "--time=" in cut["detail"] and "phases it had measured are kept and merged" in cut["detail"], cut
    assert unstarted["state"] == "failed" and "before this trial started" in unstarted["detail"], unstarted
    merged = tflaunch("sweep", "merge", str(folder))
    assert merged.returncode == 0 and EARLY_WARNING in merged.stdout, merged.stdout + merged.stderr
    (run,) = _runs()
    assert run.status is RunStatus.CANCELLED and {"spawn", "import", "devices"} <= _measured(run), run.phases
    assert run.failure is not None and run.failure.message.startswith(EARLY_WARNING), run.failure
    shown = tflaunch("history", "show", str(History(history_path()).list_runs()[0].id))
    assert EARLY_WARNING in shown.stdout, shown.stdout[-2000:]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_the_early_warning_ends_a_trial_cleanly_with_its_cause_and_its_phases(cluster, tmp_path):
    """Slurm's warning as --signal=B:USR1 delivers it, to the batch shell alone, sent here at
    once (`scancel --batch --signal=USR1`) instead of a minute before a time limit (the slow
    test below waits for the real one)."""
    marker = f"warned-{tmp_path.name}"
    folder = _submit(tmp_path, "--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=hang",
                     "--env", f"{MARKER_ENV}={marker}", "--trials-per-task", "2", "--time", "10",
                     "--signal-lead", "45", "--shared-dir", str(cluster.shared))
    job = load(folder).jobs()["submitted"][0]["job_id"]
    _in_its_load(marker)
    cluster.run("scancel", "--batch", "--signal=USR1", f"{job}_0")
    _check_warned(folder, marker, "45")


@pytest.mark.slow  # Slurm's time limits are whole minutes: the warning comes within the task's minute
def test_a_real_time_limit_sends_the_early_warning_before_it_ends_the_task(cluster, tmp_path):
    marker = f"limit-{tmp_path.name}"
    folder = _submit(tmp_path, "--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=hang",
                     "--env", f"{MARKER_ENV}={marker}", "--trials-per-task", "2", "--time", "1",
                     "--shared-dir", str(cluster.shared))  # the default lead: half of a one-minute limit
    _check_warned(folder, marker, "30")


def _job(cluster, job: str) -> str:
    return cluster.run("scontrol", "show", "job", job).stdout


@pytest.mark.slow  # a real requeue: the task is ended, held by Slurm, then started again (~30 s)
def test_a_requeued_task_measures_only_what_it_had_not_finished_and_merges_each_run_once(cluster, tmp_path):
    """The first trial of the task ends; the second hangs until `scontrol requeue` (what a
    preemption with --requeue does: SIGTERM, then the task queued again under its job id).
    The restarted task keeps the first trial's result and measures the second again."""
    fake, count, marker = fake_python(tmp_path), tmp_path / "measured", f"requeue-{tmp_path.name}"
    python = tmp_path / "second-run-hangs"
    # The second run of the sweep hangs (in its load), every other succeeds; interpreter checks
    # (no TFLAUNCH_FAKE_CHILD) pass through uncounted.
    python.write_text(f'#!/bin/sh\n[ -z "${CHILD_ENV}" ] && exec {fake} "$@"\necho x >> {count}\n'
                      f'[ "$(wc -l < {count})" -eq 2 ] && {CHILD_ENV}=hang exec {fake} "$@"\n'
                      f'{CHILD_ENV}=ok exec {fake} "$@"\n')
    python.chmod(0o755)
    folder = _submit(tmp_path, "--python", str(python), "--env", f"{CHILD_ENV}=ok", "--env",
                     f"{MARKER_ENV}={marker}", "--trials-per-task", "2", "--requeue", "--shared-dir",
                     str(cluster.shared))
    job = load(folder).jobs()["submitted"][0]["job_id"]
    assert "Requeue=1" in _job(cluster, job)
    _in_its_load(marker)
    cluster.run("scontrol", "requeue", f"{job}_0")
    deadline = time.monotonic() + 60
    while "pending" not in (now := status(folder))["counts"]:
        assert time.monotonic() < deadline, now
        time.sleep(0.3)
    states = {t["state"]: t for t in now["trials"]}
    assert set(now["counts"]) == {"done", "pending"}, now
    assert states["pending"]["detail"].startswith("requeued by Slurm"), states["pending"]
    first = tflaunch("sweep", "merge", str(folder))  # what the first attempt left: one done, one cut short
    assert first.returncode == 0 and "2 runs added" in first.stderr, first.stderr
    # Slurm holds a requeued job for about two minutes (its BeginTime); started now instead.
    cluster.run("scontrol", "update", f"JobId={job}_0", "StartTime=now")
    # Polled closely as it starts again: until task.py sets the old result aside, the trial is
    # running, never "cancelled" (CI once read that moment as the end of the sweep).
    seen: list[dict[str, int]] = []
    deadline = time.monotonic() + 120
    while {"pending", "running"} & set((now := status(folder))["counts"]) or not seen:
        seen.append(now["counts"])
        assert time.monotonic() < deadline, seen[-5:]
        time.sleep(0.05)
    assert now["counts"] == {"done": 2}, (now, seen[-5:])
    assert all(set(counts) <= {"done", "pending", "running"} for counts in seen), seen
    assert count.read_text().count("x") == 3, "the first trial was measured once, the second twice"
    logs = "".join(p.read_text(errors="replace") for p in (folder / "logs").glob("*"))
    assert "DUE TO JOB REQUEUE" in logs, "the earlier attempt's end is kept in the task's log"
    assert "measured before Slurm requeued this task (attempt 2)" in logs and "measured again in attempt 2" in logs
    assert len(list((folder / "results" / "replaced").glob("*-attempt1.json"))) == 1
    again = tflaunch("sweep", "merge", str(folder))
    assert again.returncode == 0 and "1 runs added, 1 replaced" in again.stderr, again.stderr
    once_more = tflaunch("sweep", "merge", str(folder))
    assert "0 runs added, 0 replaced" in once_more.stderr, once_more.stderr
    runs = _runs()
    assert len(runs) == 2 and {r.status for r in runs} == {RunStatus.OK}, [(r.status, r.phases) for r in runs]
    assert _none_left(marker)
