"""Cluster sweeps on a real Slurm as a newcomer meets one (issue 34): a group-shared umask,
a busy partition, --begin and --dependency, every end with its reason, resubmit with new
resources, the named resources, trials per task, a killed batch shell, status where Slurm
cannot answer, one JSON document per --json, and the sandbox command."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tflaunch.core.cluster.folder import load
from tflaunch.core.paths import history_path
from tflaunch.core.run.record import RunStatus
from tflaunch.core.store.history import History

from ..builders import fake_python
from ..fake_child import CHILD_ENV, MARKER_ENV
from .cluster_tools import leftovers, merge, settle, status, submit, tflaunch, unreachable_squeue, wait_for


@pytest.fixture
def fake(tmp_path):
    """A probe that speaks the protocol in a fraction of a second (no TensorFlow)."""
    return ["--model", "sample:mlp", "--python", fake_python(tmp_path), "--timeout", "120"]


def _trial_process(folder: Path) -> psutil.Process:
    """The running `tflaunch trial FOLDER N` process, once it has started."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = proc.info["cmdline"] or []
            if "trial" in cmdline and str(folder) in cmdline:
                return proc
        time.sleep(0.2)
    raise AssertionError(f"no trial of {folder} started")


def _alive(proc: psutil.Process) -> bool:
    """Running, not a zombie waiting for a reaper (here PID 1 may not reap)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _none_left(marker: str, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while leftovers(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not leftovers(marker)


# 022 (no group write) in the slow tier: the fast one keeps the shared-group case, 002.
@pytest.mark.parametrize("umask", [0o002, pytest.param(0o022, marks=pytest.mark.slow)])
def test_a_group_shared_umask_runs_its_trials_and_status_answers(cluster, tmp_path, fake, umask):
    """Under `umask 002` (RHEL's default for users with a group of their own) the sweep
    folder came out 775 and every trial refused it (exit 2); `sweep status` exited 1."""
    folder = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=1", "--repeat", "1", "--warmup", "0",
                    "--shared-dir", str(tmp_path / "shared"), cwd=tmp_path, umask=umask)
    assert stat.S_IMODE(folder.stat().st_mode) & 0o002 == 0
    assert settle(folder)["counts"] == {"done": 2}
    logs = list(folder.joinpath("logs").iterdir())
    assert logs and all(stat.S_IMODE(p.stat().st_mode) == 0o666 & ~umask for p in logs), "the task ran under it"
    done = tflaunch("sweep", "status", str(folder))
    assert done.returncode == 0 and "2 trials: 2 done" in done.stdout, done.stderr


@pytest.mark.slow  # a job array queued behind a 300 s job on the test cluster
def test_a_busy_partition_or_a_dependency_holds_the_check_not_the_submission(cluster, tmp_path, fake):
    """Submitting waited (up to 600 s a node type) for the check job: on a busy partition
    nothing was submitted. Now the check and its arrays wait in Slurm's queue, said by status."""
    blocker = cluster.run("sbatch", "--parsable", "--output=/dev/null", "--cpus-per-task=16", "--wrap",
                          "sleep 300").stdout.strip()
    held = cluster.run("sbatch", "--parsable", "--output=/dev/null", "--hold", "--wrap", "true").stdout.strip()
    try:
        busy = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                      "--shared-dir", str(cluster.shared), cwd=tmp_path)
        later = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                       f"--sbatch-arg=--dependency=afterok:{held}", "--sbatch-arg=--begin=now",
                       "--shared-dir", str(cluster.shared), cwd=tmp_path)
        # Slurm gives a pending job its reason at its next scheduling pass: until then squeue
        # says none, and so does status ('' detail). Asked again until the reason is there.
        waiting = _detail_once_known(busy)
        assert waiting.startswith("waiting for the check job") and "(Resources)" in waiting, waiting
        assert "(Dependency)" in _detail_once_known(later)
    finally:
        cluster.run("scancel", blocker)
    try:
        assert settle(busy)["counts"] == {"done": 2}
        assert status(later)["counts"] == {"pending": 2}, "still waiting for the user's own dependency"
        cluster.run("scontrol", "release", held)
        assert settle(later)["counts"] == {"done": 2}
    finally:  # a job left held would sit in the queue of the tests that share this cluster
        cluster.run("scancel", held)


def _detail_once_known(folder, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        detail = str(wait_for(folder, "pending")["trials"][0]["detail"])
        if detail or time.monotonic() > deadline:
            return detail
        time.sleep(0.3)


@pytest.mark.slow  # real scancel and kill -9 on the test cluster
def test_a_cancel_from_outside_and_a_killed_batch_shell_are_said_and_leave_nothing(cluster, tmp_path, fake):
    """A hand scancel showed as "lost" with no reason; `kill -9` of the batch shell left the
    trial running outside Slurm beside the next task."""
    marker = f"tflaunch-kill-{time.time_ns()}"
    folder = submit(*fake, "--env", f"{CHILD_ENV}=hang", "--env", f"{MARKER_ENV}={marker}", "--vary", "intra=2",
                    "--repeat", "1", "--warmup", "0", "--max-parallel", "1", "--shared-dir", str(cluster.shared),
                    cwd=tmp_path)
    first = wait_for(folder, "running")
    index = next(t["index"] for t in first["trials"] if t["state"] == "running")
    trial = _trial_process(folder)
    psutil.Process(trial.ppid()).send_signal(signal.SIGKILL)  # the batch shell (job.sh)
    deadline = time.monotonic() + 20
    while _alive(trial) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(trial), f"the trial outlived its batch shell: {trial}"
    wait_for(folder, "running", timeout=60)
    job = load(folder).jobs()["submitted"][0]["job_id"]
    cluster.run("scancel", job)
    settled = settle(folder)
    assert _none_left(marker), "a trial's children outlived its task"
    by_index = {t["index"]: t for t in settled["trials"]}
    other = next(i for i in by_index if i != index)
    assert by_index[other]["state"] == "cancelled", by_index[other]
    assert "from outside tflaunch (scancel" in by_index[other]["detail"], by_index[other]
    assert by_index[index]["state"] == "cancelled", by_index[index]
    assert "its batch shell wrote no exit status: the batch shell was killed" in by_index[index]["detail"]


@pytest.mark.slow  # Slurm's time limits are whole minutes: the task runs its minute, then is ended
def test_a_time_limit_is_said_and_resubmit_gives_more_time(cluster, tmp_path, fake):
    # No early warning (test_cluster_preemption.py has it): Slurm's own limit ends the trials.
    folder = submit(*fake, "--env", f"{CHILD_ENV}=hang", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--time", "1", "--signal-lead", "0", "--shared-dir", str(cluster.shared), cwd=tmp_path)
    settled = settle(folder, timeout=240)
    for trial in settled["trials"]:
        assert trial["state"] == "failed" and "time limit" in trial["detail"] and "--time=" in trial["detail"], trial
    again = tflaunch("sweep", "resubmit", str(folder), "--time", "5")
    assert again.returncode == 0, again.stderr
    assert load(folder).options["time"] == "5"
    job = load(folder).jobs()["submitted"][-1]["job_id"]
    assert "TimeLimit=00:05:00" in cluster.run("scontrol", "show", "job", job).stdout
    tflaunch("sweep", "cancel", str(folder))


def test_named_resources_setup_lines_and_a_container_reach_the_jobs(cluster, tmp_path, fake):
    """--time, --mem, --cpus-per-task, --job-name, --setup and --container (an Apptainer image,
    here a stand-in `apptainer` on PATH: the container runtime is the boundary)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "container-images"
    (bin_dir / "apptainer").write_text(f'#!/bin/sh\n[ "$1" = exec ] && shift\n[ "$1" = --nv ] && shift\n'
                                       f'echo "$1" >> {seen}\nshift\nexec "$@"\n')
    (bin_dir / "apptainer").chmod(0o755)
    setup_mark = tmp_path / "setup-ran"
    (tmp_path / "tf.sif").write_bytes(b"an image")  # the check job reads it on the node
    folder = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--time", "10",
                    "--mem", "200M", "--cpus-per-task", "2", "--job-name", "my-sweep",
                    "--setup", f"touch {setup_mark}", "--container", "tf.sif",
                    "--shared-dir", str(cluster.shared), cwd=tmp_path,
                    env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert settle(folder)["counts"] == {"done": 2}
    assert setup_mark.exists() and seen.read_text().split() == ["tf.sif", "tf.sif"]
    options = load(folder).options
    assert (options["time"], options["mem"], options["cpus_per_task"]) == ("10", "200M", 2), "saved with the sweep"
    job = cluster.run("scontrol", "show", "job", load(folder).jobs()["submitted"][0]["job_id"]).stdout
    assert "JobName=my-sweep" in job and "TimeLimit=00:10:00" in job and "MinMemoryNode=200M" in job
    assert "NumCPUs=2" in job or "MinCPUsNode=2" in job


@pytest.mark.slow  # a real check job on the test cluster
def test_a_container_runtime_or_image_the_node_lacks_fails_the_check_not_every_trial(cluster, tmp_path, fake):
    """The check passed and every trial failed with "status 127" (issue 43, item 6)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "apptainer").write_text('#!/bin/sh\nshift; shift; shift; exec "$@"\n')
    (bin_dir / "apptainer").chmod(0o755)
    without = {"PATH": os.environ["PATH"]}
    folder = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--container", "missing.sif", "--shared-dir", str(cluster.shared), cwd=tmp_path,
                    env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    settled = settle(folder)
    assert set(settled["counts"]) == {"failed"}, settled
    assert "the container image: missing.sif does not exist" in settled["trials"][0]["detail"], settled["trials"][0]
    (tmp_path / "there.sif").write_bytes(b"an image")
    folder = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--container", "there.sif", "--shared-dir", str(cluster.shared), cwd=tmp_path, env=without)
    detail = settle(folder)["trials"][0]["detail"]
    assert "apptainer (for --container): it is not on the node" in detail, detail


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_trials_per_task_run_in_fewer_tasks_and_merge_as_ever(cluster, tmp_path, fake):
    folder = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat", "2", "--warmup", "0",
                    "--trials-per-task", "3", "--max-parallel", "1", "--shared-dir", str(cluster.shared),
                    cwd=tmp_path)
    (submission,) = load(folder).jobs()["submitted"]
    assert [len(t) for t in submission["tasks"]] == [3, 1]
    assert settle(folder)["counts"] == {"done": 4}
    assert len(list(folder.joinpath("logs").glob("*.out"))) == 2, "two array tasks ran the four trials"
    (part,) = merge(folder)
    assert part["trials_run"] == 4 and {len(r["values"]) for r in part["results"]} == {2}


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_status_answers_from_the_files_where_squeue_fails_or_hangs(cluster, tmp_path, fake):
    folder = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--shared-dir", str(cluster.shared), cwd=tmp_path)
    assert settle(folder)["counts"] == {"done": 2}
    env = {"PATH": unreachable_squeue(tmp_path)}
    done = tflaunch("sweep", "status", str(folder), env=env)
    assert done.returncode == 0 and "2 trials: 2 done" in done.stdout, done.stderr
    assert "Shown from the folder's files alone" in done.stderr
    as_json = tflaunch("sweep", "status", str(folder), "--json", env=env)
    assert json.loads(as_json.stdout)["counts"] == {"done": 2} and json.loads(as_json.stdout)["note"]


def test_merge_of_a_running_sweep_says_what_still_runs(cluster, tmp_path, fake):
    """It said "No setting succeeded." of trials that had not ended."""
    folder = submit(*fake, "--env", f"{CHILD_ENV}=hang", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--max-parallel", "1", "--shared-dir", str(cluster.shared), cwd=tmp_path)
    wait_for(folder, "running")
    merged = tflaunch("sweep", "merge", str(folder))
    assert merged.returncode == 0, merged.stderr
    assert "No setting succeeded" not in merged.stdout
    assert "No result yet: 1 running, 1 pending (trials 0, 1)" in merged.stdout, merged.stdout
    assert "not final: 1 running, 1 pending" in merged.stderr
    tflaunch("sweep", "cancel", str(folder))


@pytest.mark.slow  # a real trial with Slurm made unreachable
def test_with_slurm_unreachable_a_trial_without_an_end_is_unknown_and_merge_is_not_final(cluster, tmp_path, fake):
    """Running and pending trials showed as "lost ... Slurm no longer holds it" and merge said
    "2 lost" with no "not final" (issue 43, item 6)."""
    folder = submit(*fake, "--env", f"{CHILD_ENV}=hang", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--max-parallel", "1", "--shared-dir", str(cluster.shared), cwd=tmp_path)
    wait_for(folder, "running")
    env = {"PATH": unreachable_squeue(tmp_path)}
    try:
        shown = json.loads(tflaunch("sweep", "status", str(folder), "--json", env=env).stdout)
        assert shown["counts"] == {"unknown": 2}, shown
        assert all(t["detail"].startswith("unknown (Slurm unreachable)") for t in shown["trials"])
        merged = tflaunch("sweep", "merge", str(folder), env=env)
        assert merged.returncode == 0, merged.stderr
        assert "not final: 2 unknown (trials 0, 1)" in merged.stderr and " lost" not in merged.stderr, merged.stderr
    finally:
        tflaunch("sweep", "cancel", str(folder))


@pytest.mark.slow  # a real scancel on the test cluster (cluster end causes)
def test_a_scancel_is_logged_as_slurm_s_sigterm_not_as_ctrl_c(cluster, tmp_path, fake):
    """The trial's log said "interrupted (Ctrl+C)" of a scancel or a time limit (issue 43, item 6)."""
    marker = f"scancel-{tmp_path.name}"
    folder = submit(*fake, "--env", f"{CHILD_ENV}=hang", "--env", f"{MARKER_ENV}={marker}", "--vary", "intra=2",
                    "--repeat", "1", "--warmup", "0", "--max-parallel", "1", "--shared-dir", str(cluster.shared),
                    cwd=tmp_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(  # the run is in its load: its helper (marker in argv) is up
            marker in " ".join(p.cmdline()) for p in leftovers(marker)):
        time.sleep(0.2)
    time.sleep(1)  # and the phases it reported before it were read (a trial's driver reads within milliseconds)
    cluster.run("scancel", load(folder).jobs()["submitted"][0]["job_id"])  # as a user would, from outside
    settle(folder)
    logs = "".join(p.read_text(errors="replace") for p in (folder / "logs").glob("*.err"))
    assert "ended by SIGTERM from Slurm" in logs and "Ctrl+C" not in logs, logs[-2000:]
    # The phases measured before the end are kept: in its result, and merged into the history.
    assert "the phases it had measured are kept in its result" in logs, logs[-2000:]
    cut_short = next(t for t in status(folder)["trials"] if t["detail"])
    assert cut_short["state"] == "cancelled" and "phases it had measured are kept" in cut_short["detail"], cut_short
    merge(folder)
    runs = [History(history_path()).load(s.id) for s in History(history_path()).list_runs()]
    cut = [r for r in runs if r.status is RunStatus.CANCELLED]
    assert cut and {"spawn", "import", "devices"} <= {name for name, p in cut[0].phases.items()
                                                       if p.duration is not None}, [r.phases for r in runs]


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_every_json_answer_of_a_bench_on_slurm_is_one_document(cluster, tmp_path, fake):
    """`bench --on slurm --json` printed a path; `sweep merge --json` added a text line."""
    done = tflaunch("bench", "--on", "slurm", *fake, "--env", f"{CHILD_ENV}=ok", "--repeat", "3", "--json",
                    "--gpu-types", "a100,h100", "--shared-dir", str(cluster.shared), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = Path(json.loads(done.stdout)["folder"])
    assert settle(folder)["counts"] == {"done": 6}
    merged = tflaunch("sweep", "merge", str(folder), "--json")
    document = json.loads(merged.stdout)
    assert [p["node_type"] for p in document["parts"]] == ["a100", "h100"]
    assert " than " in document["node_type_comparison"] and document["still_running"] is None
    review = tflaunch("report", f"cluster:{folder}", "-o", str(tmp_path / "review.md"))
    assert review.returncode == 0, review.stderr
    assert document["node_type_comparison"] in (tmp_path / "review.md").read_text(), "the bench's point"


def test_no_cluster_reachable_points_at_the_sandbox(tmp_path):
    done = tflaunch("sweep", "--on", "slurm", "--model", "sample:mlp", "--vary", "intra=2", "--shared-dir",
                    str(tmp_path), env={"SLURM_CONF": str(tmp_path / "no-such-slurm.conf")})
    assert done.returncode == 1 and "No Slurm cluster answers" in done.stderr, done.stderr
    assert "tflaunch cluster sandbox up" in done.stderr


@pytest.mark.slow  # 9 s: a second Slurm beside the tests' own, which every cluster test starts with the same code
def test_the_sandbox_starts_a_slurm_that_runs_jobs_and_stops(cluster, tmp_path, fake):
    deep = tmp_path / ("d" * 60)  # Slurm's job sockets live in its spool: a path past 108 bytes ends every job
    refused = tflaunch("cluster", "sandbox", "up", env={"TFLAUNCH_DATA_DIR": str(deep)}, timeout=60)
    assert refused.returncode == 1 and "too deep for Slurm's job sockets" in refused.stderr, refused.stderr
    data = Path(tempfile.mkdtemp(prefix="tfl-", dir="/tmp"))  # short: pytest's folders can be too deep
    env = {"TFLAUNCH_DATA_DIR": str(data)}
    up = tflaunch("cluster", "sandbox", "up", env=env, timeout=60)
    try:
        assert up.returncode == 0, up.stderr
        line = up.stdout.strip().splitlines()[-1]
        assert line.startswith("export SLURM_CONF=")
        conf = line.removeprefix("export SLURM_CONF=")
        job = tflaunch("sweep", "--on", "slurm", *fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat",
                       "1", "--warmup", "0", "--shared-dir", str(tmp_path / "shared"), env={**env, "SLURM_CONF": conf})
        assert job.returncode == 0, job.stderr
        folder = Path(job.stdout.strip().splitlines()[-1])
        deadline = time.monotonic() + 120
        while not list(folder.joinpath("exits").iterdir()) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert list(folder.joinpath("exits").iterdir()), "the sandbox ran the trial"
    finally:
        down = tflaunch("cluster", "sandbox", "down", env=env, timeout=60)
    assert down.returncode == 0 and "stopped" in down.stderr, down.stderr
    again = tflaunch("cluster", "sandbox", "status", env=env)
    assert again.returncode == 1 and "no sandbox runs" in again.stdout
    shutil.rmtree(data, ignore_errors=True)


@pytest.mark.slow  # 20 s: a second Slurm, started twice
def test_the_sandbox_is_a_service_that_restarts_what_died_and_ends_what_it_started(cluster):
    """`sandbox up` reported "runs" with its controller dead and restarted nothing; `sandbox
    down` left a running job's step behind (issue 43, item 8)."""
    data = Path(tempfile.mkdtemp(prefix="tfl-", dir="/tmp"))
    env = {"TFLAUNCH_DATA_DIR": str(data)}
    try:
        up = tflaunch("cluster", "sandbox", "up", env=env, timeout=90)
        assert up.returncode == 0, up.stderr
        conf = up.stdout.strip().splitlines()[-1].removeprefix("export SLURM_CONF=")
        controller = int((data / "slurm-sandbox" / "daemons.pid").read_text().split()[0])
        os.kill(controller, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while psutil.pid_exists(controller) and psutil.Process(controller).status() != psutil.STATUS_ZOMBIE \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        broken = tflaunch("cluster", "sandbox", "status", env=env)
        assert broken.returncode == 1 and "slurmctld is not running" in broken.stdout, broken.stdout
        again = tflaunch("cluster", "sandbox", "up", env=env, timeout=90)
        assert again.returncode == 0, again.stderr
        conf = again.stdout.strip().splitlines()[-1].removeprefix("export SLURM_CONF=")
        works = tflaunch("cluster", "sandbox", "status", env=env)
        assert works.returncode == 0 and "runs and answers" in works.stderr, works.stderr + works.stdout
        job = subprocess.run(["sbatch", "--parsable", "--output=/dev/null", "--wrap", "sleep 300"], text=True,
                             capture_output=True, env={**os.environ, "SLURM_CONF": conf}, timeout=30)
        assert job.returncode == 0, job.stderr
        deadline = time.monotonic() + 30
        while "R" not in subprocess.run(["squeue", "--noheader", "--format=%t"], text=True, capture_output=True,
                                        env={**os.environ, "SLURM_CONF": conf}).stdout and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        down = tflaunch("cluster", "sandbox", "down", env=env, timeout=90)
    assert down.returncode == 0 and "stopped" in down.stderr, down.stderr
    left = [p for p in psutil.process_iter(["environ", "cmdline"])
            if (p.info["environ"] or {}).get("SLURM_CONF") == conf or conf in (p.info["cmdline"] or [])]
    assert not left, f"left behind: {[p.info['cmdline'] for p in left]}"
    shutil.rmtree(data, ignore_errors=True)


@pytest.mark.slow  # four slowed tasks of a job array on the test cluster
def test_merged_runs_keep_their_node_hosts_and_sharing_in_the_history_and_its_review(cluster, tmp_path, fake):
    """Once merged, `report sweep:N` and the history's summary lost the node, the host and
    the note that trials shared it."""
    slow = tmp_path / "slow-fake-python"  # a second each: four tasks at once overlap on the one node
    slow.write_text(f'#!/bin/sh\nsleep 1\nexec {fake[3]} "$@"\n')
    slow.chmod(0o755)
    folder = submit("--model", "sample:mlp", "--python", str(slow), "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2",
                    "--repeat", "2", "--warmup", "0", "--shared-dir", str(cluster.shared), cwd=tmp_path)
    assert settle(folder)["counts"] == {"done": 4}
    merge(folder)
    history = History(history_path())
    ((sweep_id, _, _, _, summary),) = history.list_sweeps()
    assert f"On any (no GPU seen): {cluster.host}." in summary and "trials ran at once" in summary, summary
    review = tflaunch("report", f"sweep:{sweep_id}", "-o", str(tmp_path / "review.md"))
    assert review.returncode == 0, review.stderr
    text = (tmp_path / "review.md").read_text()
    assert "any (no GPU seen)" in text and cluster.host in text and "runs on " + cluster.host in text, text
    exported = tflaunch("history", "export", "--format", "csv")  # each run: the node type and host it ran on
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    merged = [row for row in rows if row["host"]]
    assert len(merged) == 4 and {(r["node_type"], r["host"]) for r in merged} == {("any", cluster.host)}, rows
