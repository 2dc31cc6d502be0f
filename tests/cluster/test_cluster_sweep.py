"""Sweeps through a real Slurm cluster (tests/cluster/slurm_cluster.py), end to end: submit,
status, merge, resubmit, cancel, and what is refused before anything is submitted."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tflaunch.core.cluster.folder import load
from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import ProfileStore, describe_evidence

from ..builders import fake_python
from ..fake_child import CHILD_ENV, MARKER_ENV
from .cluster_tools import leftovers, merge, settle, status, submit, tflaunch, wait_for


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_real_sweep_runs_as_a_job_array_and_merges_into_the_history_once(cluster, tmp_path):
    """sample:mlp over intra=1,2, each trial a real TensorFlow child on the node."""
    folder = submit("--model", "sample:mlp", "--steady", "1", "--vary", "intra=1,2", "--repeat", "1",
                    "--warmup", "0", "--shared-dir", str(cluster.shared), cwd=tmp_path)
    settled = settle(folder)
    assert settled["counts"] == {"done": 3}, settled
    parts = merge(folder)
    (part,) = parts
    assert part["node_type"] == "any" and part["hosts"] == [cluster.host]
    assert {r["setting"] for r in part["results"]} == {"baseline", "intra=1", "intra=2"}
    assert all(len(r["values"]) == 1 and r["values"][0] > 0 for r in part["results"])
    history = History(history_path())
    (sweep_id, _, model, state, _summary), = history.list_sweeps()
    assert (model, state) == ("sample:mlp", "done")
    assert history.sweep_plan(sweep_id)["cluster"]["id"] == load(folder).id
    trials = history.sweep_trials(sweep_id)
    (job,) = load(folder).jobs()["submitted"]
    assert sorted(t.index for t, _ in trials) == [0, 1, 2]
    for trial, record in trials:
        node = trial.node
        assert node["host"] == cluster.host and node["array_job_id"] == job["job_id"]
        assert node["array_task_id"] == str(trial.index) and record.status.value == "ok"
        assert record.phase("import").duration > 0  # a real TensorFlow import, on the node
    ids = sorted(r.history_id for _, r in trials)
    assert merge(folder) == parts, "merging twice gives the same result"
    assert sorted(r.history_id for _, r in history.sweep_trials(sweep_id)) == ids, "and the same rows"
    assert len(history.list_sweeps()) == 1


@pytest.fixture
def fake(tmp_path):
    """A probe that speaks the protocol in a fraction of a second (no TensorFlow)."""
    return ["--model", "sample:mlp", "--python", fake_python(tmp_path), "--timeout", "60"]


@pytest.mark.slow  # 12 trials on two node types, merged three times, one rerun: 15 s
def test_each_gpu_type_gets_its_own_array_order_and_verdict(cluster, tmp_path, fake):
    # An interpreter that sleeps $DELAY first: DELAY=0 saves a second and a half, a clear winner.
    slow = tmp_path / "slow-fake-python"
    slow.write_text(f'#!/bin/sh\nsleep "${{DELAY:-0}}"\nexec {fake[3]} "$@"\n')
    slow.chmod(0o755)
    folder = submit("--model", "sample:mlp", "--python", str(slow), "--env", f"{CHILD_ENV}=ok", "--env", "DELAY=1.5",
                    "--vary", "env.DELAY=0", "--repeat", "3", "--warmup", "0",
                    "--gpu-types", "a100,h100", "--max-parallel", "3", "--shared-dir", str(cluster.shared),
                    cwd=tmp_path)
    sweep = load(folder)
    assert [(t.name, t.gres) for t in sweep.node_types] == [("a100", "gpu:a100:1"), ("h100", "gpu:h100:1")]
    trials = sweep.trials()
    for node_type in ("a100", "h100"):
        mine = sorted((t for t in trials if t.node_type == node_type), key=lambda t: t.number)
        assert sorted(t.candidate for t in mine) == sorted(["baseline", "env.DELAY=0"] * 3)
    assert [s["node_type"] for s in sweep.jobs()["submitted"]] == ["a100", "h100"]
    assert settle(folder)["counts"] == {"done": 12}
    parts = merge(folder)
    assert [p["node_type"] for p in parts] == ["a100", "h100"]
    assert all(p["trials_run"] == 6 and p["winner"] == "env.DELAY=0" for p in parts), "one verdict per node type"
    history = History(history_path())
    for sweep_id, *_ in history.list_sweeps():
        trials_stored = history.sweep_trials(sweep_id)
        node_type = history.sweep_plan(sweep_id)["cluster"]["node_type"]
        assert {t.node_type for t, _ in trials_stored} == {node_type}
        assert {t.node["gpus_on_node"] for t, _ in trials_stored} == {"1"}, "each task got its GPU"
    text = tflaunch("sweep", "merge", str(folder))
    assert "== a100 (no GPU seen)" in text.stdout and "== h100 (no GPU seen)" in text.stdout
    assert f"trials ran at once on {cluster.host}" in text.stderr, "three per array, two arrays, one node"
    refused = tflaunch("sweep", "merge", str(folder), "--save-winner", "fast")
    assert refused.returncode == 2 and "--node-type" in refused.stderr
    saved = tflaunch("sweep", "merge", str(folder), "--save-winner", "fast", "--node-type", "h100", "--yes")
    assert saved.returncode == 0, saved.stderr
    profile = ProfileStore(profiles_dir()).load("fast")
    assert profile.config.extra_env["DELAY"] == "0" and profile.evidence["sweep"]["node_type"] == "h100 (no GPU seen)"
    assert any("Measured on cluster nodes of type h100" in line for line in describe_evidence(profile.evidence))
    review = tflaunch("report", f"cluster:{folder}", "-o", str(tmp_path / "review.md"))
    assert review.returncode == 0, review.stderr
    text = (tmp_path / "review.md").read_text()
    assert "a100: Winner: env.DELAY=0" in text and "h100: Winner: env.DELAY=0" in text
    assert text.count("| a100 (no GPU seen) |") == 2 and text.count("| h100 (no GPU seen) |") == 2



@pytest.mark.slow  # resubmit's rerun and merge are guarded by the failing trial's test; this is a lost file
def test_a_lost_result_is_rerun_by_resubmit_and_merged_in_its_place(cluster, tmp_path, fake):
    folder = submit(*fake, "--env", f"{CHILD_ENV}=ok", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--shared-dir", str(cluster.shared), cwd=tmp_path)
    assert settle(folder)["counts"] == {"done": 2}
    merge(folder)
    history = History(history_path())
    victim = load(folder).trials()[1]
    folder.joinpath("results", f"{victim.index:04d}.json").unlink()
    lost = status(folder)
    assert lost["counts"] == {"done": 1, "lost": 1}
    assert next(t for t in lost["trials"] if t["index"] == victim.index)["detail"].startswith("its task left")
    again = tflaunch("sweep", "resubmit", str(folder))
    assert again.returncode == 0 and f"({victim.index})" in again.stderr, again.stderr
    assert settle(folder)["counts"] == {"done": 2}
    merged = tflaunch("sweep", "merge", str(folder))
    assert "1 runs added, 1 replaced" in merged.stderr, "the rerun trial's run takes the earlier one's place"
    assert sum(len(history.sweep_trials(i)) for i, *_ in history.list_sweeps()) == 2
    nothing = tflaunch("sweep", "resubmit", str(folder))
    assert "nothing to resubmit" in nothing.stderr


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_failing_trial_is_failed_with_its_reason_and_rerun_by_resubmit(cluster, tmp_path, fake):
    folder = submit(*fake, "--env", f"{CHILD_ENV}=error", "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--shared-dir", str(cluster.shared), cwd=tmp_path)
    settled = settle(folder)
    assert settled["counts"] == {"failed": 2}
    assert all(t["detail"] for t in settled["trials"])
    assert all(folder.joinpath("exits", f"{t['index']:04d}").read_text().strip() == "1" for t in settled["trials"]), \
        "the array task itself exits 1, so Slurm sees the failure too"
    parts = merge(folder)
    assert parts[0]["verdict"] == "No setting succeeded."  # every trial ended: a verdict
    again = tflaunch("sweep", "resubmit", str(folder))
    assert "resubmitted 2 trials" in again.stderr, again.stderr
    assert len(list(folder.joinpath("results", "replaced").iterdir())) == 2, "the failed results are kept aside"
    assert settle(folder)["counts"] == {"failed": 2}


def test_cancel_mid_array_ends_the_running_trial_and_its_children(cluster, tmp_path, fake):
    marker = f"tflaunch-cancel-{time.time_ns()}"
    folder = submit(*fake, "--env", f"{CHILD_ENV}=hang", "--env", f"{MARKER_ENV}={marker}", "--vary", "intra=2",
                    "--repeat", "2", "--warmup", "0", "--max-parallel", "1", "--shared-dir", str(cluster.shared),
                    cwd=tmp_path)
    running = wait_for(folder, "running")
    assert running["counts"].get("pending", 0) >= 1, running
    done = tflaunch("sweep", "cancel", str(folder))
    assert done.returncode == 0 and "cancelled job" in done.stderr
    settled = settle(folder)
    assert settled["counts"] == {"cancelled": 4}, settled

    deadline = time.monotonic() + 15
    while leftovers(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not leftovers(marker), "a cancelled trial left processes on the node"


def test_a_model_the_nodes_cannot_see_fails_its_check_and_no_trial_runs(cluster, tmp_path, models):
    """The check job and the arrays are submitted together (the arrays wait for it, afterok);
    a check that finds the model missing cancels them, and status says why, on which node.
    resubmit checks again before any trial runs (it used to burn every task in a second)."""
    if not cluster.private_works:
        pytest.skip("a folder the node does not see needs a mount namespace (root and unshare)")
    hidden = cluster.private / f"model-{tmp_path.name}.keras"
    shutil.copy(models["mlp"]["keras"], hidden)
    folder = submit("--model", str(hidden), "--vary", "intra=2", "--repeat", "1", "--warmup", "0",
                    "--shared-dir", str(cluster.shared), cwd=tmp_path)
    settled = settle(folder)
    assert settled["counts"] == {"failed": 2}, settled
    for trial in settled["trials"]:
        assert f"the check on any node {cluster.host} found the model: {hidden} does not exist" in trial["detail"]
        assert "cancelled before they ran" in trial["detail"]
    assert not list(folder.joinpath("results").glob("*.json")) and not list(folder.joinpath("exits").iterdir())
    assert cluster.run("squeue", "--noheader").stdout.strip() == "", "the arrays were cancelled"
    again = tflaunch("sweep", "resubmit", str(folder))
    assert again.returncode == 0 and "checked again first" in again.stderr, again.stderr
    assert settle(folder)["counts"] == {"failed": 2}
    assert not list(folder.joinpath("exits").iterdir()), "no trial ran after the second check either"


def test_a_folder_the_nodes_cannot_see_fails_its_check_and_says_so(cluster, tmp_path):
    if not cluster.private_works:
        pytest.skip("a folder the node does not see needs a mount namespace (root and unshare)")
    hidden = cluster.private / f"sweeps-{tmp_path.name}"  # the cluster is shared by the session's tests
    folder = submit("--model", "sample:mlp", "--vary", "intra=2", "--repeat", "1", "--shared-dir", str(hidden),
                    cwd=tmp_path)
    settled = settle(folder)
    assert settled["counts"] == {"failed": 4}, settled
    detail = settled["trials"][0]["detail"]
    assert "is not shared with the nodes" in detail and "--shared-dir" in detail, detail
    assert cluster.run("squeue", "--noheader").stdout.strip() == "", "the arrays waiting for it were cancelled"


@pytest.mark.slow  # six trials on two node types: 9 s
def test_a_bench_repeated_on_each_node_type_compares_the_node_types(cluster, tmp_path, fake):
    done = tflaunch("bench", "--on", "slurm", *fake, "--env", f"{CHILD_ENV}=ok", "--repeat", "3",
                    "--gpu-types", "a100,h100", "--shared-dir", str(cluster.shared), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the settings as given, 0 warm-up + 3 measured trials" in done.stderr
    folder = load(Path(done.stdout.strip().splitlines()[-1]))
    assert [t.candidate for t in folder.trials()] == ["baseline"] * 6
    assert settle(folder.path)["counts"] == {"done": 6}
    merged = tflaunch("sweep", "merge", str(folder.path))
    assert merged.returncode == 0, merged.stderr
    assert "== a100" in merged.stdout and "== h100" in merged.stdout
    line = merged.stdout.strip().splitlines()[-1]
    assert " faster than " in line and "95% CI" in line and "medians" in line, line
    refused = tflaunch("bench", "--on", "slurm", *fake, "--save-profile", "x", "--shared-dir", str(cluster.shared))
    assert refused.returncode == 2 and "not for a cluster" in refused.stderr
