"""The cluster sweep's files and Slurm's answers, without a cluster: a sweep folder made
here, fake sbatch/squeue/scancel on PATH for the error paths (unit tests)."""

from __future__ import annotations

import grp
import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tflaunch.core.cluster import resources, slurm
from tflaunch.core.cluster.folder import FolderError, NodeType, create, load
from tflaunch.core.cluster.status import trial_states
from tflaunch.core.cluster.submit import submit
from tflaunch.core.cluster.trial import RESULT_FORMAT, RESULT_VERSION
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.sweep.plan import SweepPlan


def _folder(tmp_path: Path, repeat: int = 2):
    plan = SweepPlan(LaunchConfig(model="sample:mlp"), {"intra": ["1", "2"]}, repeat=repeat, warmup=1, racing=False)
    return create(tmp_path / "shared", plan, plan.candidates(), [NodeType("a100", "gpu:a100:1"),
                                                                 NodeType("h100", "gpu:h100:1")], {"cwd": "/"})


@given(st.sets(st.integers(0, 3000), min_size=1, max_size=60))
@example({0, 1, 2, 5, 7, 8})
@example({4000})
def test_array_specs_say_exactly_the_indices(indices):
    spec = slurm.array_spec(sorted(indices))
    assert slurm.expand_indices(spec) == sorted(indices)
    assert len(spec) <= len(",".join(map(str, indices)))


def test_squeue_lines_of_running_and_grouped_pending_tasks():
    tasks = slurm.parse_queue("12_3|RUNNING|None\n12_[4-6%2]|PENDING|JobArrayTaskLimit\n13|PENDING|Priority\n")
    assert [(t.index, t.state, t.reason) for t in tasks] == [
        (3, "RUNNING", "None"), (4, "PENDING", "JobArrayTaskLimit"), (5, "PENDING", "JobArrayTaskLimit"),
        (6, "PENDING", "JobArrayTaskLimit"), (-1, "PENDING", "Priority")], "a job of its own (the check job) too"


def test_the_folder_holds_every_trial_of_every_node_type_and_reads_back(tmp_path):
    folder = _folder(tmp_path)
    again = load(folder.path)
    assert again.id == folder.id and again.plan == folder.plan and again.node_types == folder.node_types
    trials = again.trials()
    assert len(trials) == 2 * 3 * (1 + 2) and [t.index for t in trials] == list(range(18))
    assert sum(t.warmup for t in trials) == 2 * 3, "the warm-up round of each node type"
    script = folder.script_path.read_text()
    assert "tflaunch.core.cli.main trial" in script and "SLURM_ARRAY_TASK_ID" in script


def test_a_folder_others_can_write_is_refused(tmp_path):
    folder = _folder(tmp_path)
    os.chmod(folder.path / "trials", 0o777)
    with pytest.raises(FolderError, match="trials: anyone may write it \\(mode 777: the o\\+w bit\\).*chmod go-w"):
        load(folder.path)


def test_states_from_the_files_alone(tmp_path):
    folder = _folder(tmp_path, repeat=1)
    folder.add_submission("77", "a100", [0, 1, 2, 3, 4, 5])
    folder.exit_path(1).write_text("2\n")
    folder.result_path(2).write_text("{ half a file")
    other = {"format": RESULT_FORMAT, "version": RESULT_VERSION, "sweep": "someone-else", "index": 3,
             "node": {}, "refused": None, "runs": []}
    folder.result_path(3).write_text(json.dumps(other))
    refused = {**other, "sweep": folder.id, "index": 4, "refused": "refused on n1: python: not found"}
    folder.result_path(4).write_text(json.dumps(refused))
    folder.add_cancelled(["77"])
    states = {s.index: s for s in trial_states(folder, ask_slurm=False)}
    assert (states[0].state, states[5].state) == ("cancelled", "cancelled")
    assert states[1].state == "failed" and "ended with status 2 and wrote no result" in states[1].detail
    assert states[2].state == "failed" and "cannot be read" in states[2].detail and "resubmit" in states[2].detail
    assert states[3].state == "failed" and "another sweep" in states[3].detail
    assert states[4].state == "failed" and states[4].detail == "refused on n1: python: not found"
    assert states[6].state == "lost" and states[6].detail == "never submitted"


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """sbatch, squeue and scancel that answer as told: $FAKE_SBATCH_OUT, exit $FAKE_SBATCH_RC."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sbatch", "squeue", "scancel"):
        path = bin_dir / name
        path.write_text('#!/bin/sh\nprintf "%s" "$FAKE_OUT"\nprintf "%s" "$FAKE_ERR" >&2\nexit "${FAKE_RC:-0}"\n')
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return monkeypatch


def test_sbatch_errors_say_the_command_slurms_words_and_what_to_check(fake_slurm):
    fake_slurm.setenv("FAKE_RC", "1")
    fake_slurm.setenv("FAKE_ERR", "sbatch: error: invalid partition specified: gpu\n")
    with pytest.raises(slurm.SlurmError) as caught:
        slurm.submit("/x/job.sh", [0, 1], ["--partition=gpu"], 2)
    text = str(caught.value)
    assert "`sbatch --parsable ...` failed: sbatch: error: invalid partition specified: gpu" in text
    assert "could not submit the sweep's job array" in text and "--gres" in text


def test_an_sbatch_that_prints_no_job_id_is_refused(fake_slurm):
    fake_slurm.setenv("FAKE_OUT", "Submitted batch job 12\n")
    with pytest.raises(slurm.SlurmError, match="instead of a job id"):
        slurm.submit("/x/job.sh", [0], [])
    fake_slurm.setenv("FAKE_OUT", "4711;cluster2\n")
    assert slurm.submit("/x/job.sh", [0], []) == "4711"


def test_no_sbatch_on_path_says_where_to_run(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(slurm.SlurmError, match="`sbatch` is not on PATH.*login node"):
        slurm.submit("/x/job.sh", [0], [])
    assert slurm.accounting(["1"]) is None, "no sacct: no accounting, not an error"


def test_squeue_failing_is_said_by_status(fake_slurm, tmp_path):
    folder = _folder(tmp_path, repeat=1)
    folder.add_submission("5", "a100", [0])
    fake_slurm.setenv("FAKE_RC", "1")
    fake_slurm.setenv("FAKE_ERR", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)")
    with pytest.raises(slurm.SlurmError, match="Unable to contact slurm controller"):
        trial_states(folder)


def _task_lists(folder, line: str) -> list[list[int]]:
    """The trials of each task of the array an sbatch line submitted (job.sh's argument names its list)."""
    text = (folder.path / "tasks" / line.split()[-1]).read_text()
    return [[int(i) for i in row.split()] for row in text.splitlines()]


def test_each_node_types_array_counts_from_zero_and_its_tasks_map_back_to_trials(fake_slurm, tmp_path):
    """h100's trials are 9-17; its array is 0-8, task N running the trial on line N of its
    task list, so no array outgrows MaxArraySize (1001 by default) because of the node types
    before it. Each array waits for its node type's check job (afterok), submitted with it."""
    folder = _folder(tmp_path)
    calls = tmp_path / "sbatch-calls"
    fake_slurm.setenv("FAKE_OUT", "41\n")
    sbatch = Path(os.environ["PATH"].split(os.pathsep)[0]) / "sbatch"
    sbatch.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nprintf "%s" "$FAKE_OUT"\n')
    submit(folder)
    check_a100, a100, check_h100, h100 = calls.read_text().splitlines()
    assert check_a100.endswith("check/a100.sh") and check_h100.endswith("check/h100.sh")
    assert "--array=0-8 " in a100 and _task_lists(folder, a100) == [[i] for i in range(9)]
    assert "--array=0-8 " in h100 and _task_lists(folder, h100) == [[i] for i in range(9, 18)]
    assert "--gres=gpu:h100:1" in h100 and "--dependency=afterok:41" in h100
    jobs = folder.jobs()["submitted"]
    assert [(j["node_type"], j["tasks"][0], j["check"]) for j in jobs] == [("a100", [0], "41"), ("h100", [9], "41")]
    jobs[1]["job_id"] = "42"
    folder.jobs_path.write_text(json.dumps({"submitted": jobs, "cancelled": []}))
    fake_slurm.setenv("FAKE_OUT", "42_3|RUNNING|None\n42_[4-5]|PENDING|JobArrayTaskLimit\n")
    states = {s.index: s.state for s in trial_states(folder)}
    assert (states[12], states[13], states[14], states[3]) == ("running", "pending", "pending", "lost")


def test_an_array_past_the_clusters_max_array_size_is_split(fake_slurm, tmp_path):
    """MaxArraySize 4 (scontrol says so): each node type's 9 trials go in arrays of 4, 4 and 1
    tasks, each counting from 0 with a task list of its own."""
    folder = _folder(tmp_path)
    bin_dir = Path(os.environ["PATH"].split(os.pathsep)[0])
    (bin_dir / "scontrol").write_text('#!/bin/sh\necho "MaxArraySize            = 4"\n')
    (bin_dir / "scontrol").chmod(0o755)
    calls = tmp_path / "sbatch-calls"
    (bin_dir / "sbatch").write_text(f'#!/bin/sh\necho "$@" >> {calls}\necho 7\n')
    jobs = submit(folder)
    lines = [line for line in calls.read_text().splitlines() if "--array=" in line]
    assert [(line.split("--array=")[1].split()[0], _task_lists(folder, line)[0][0]) for line in lines] == [
        ("0-3", 0), ("0-3", 4), ("0", 8), ("0-3", 9), ("0-3", 13), ("0", 17)]
    assert jobs == {"a100": "7, 7, 7", "h100": "7, 7, 7"}
    assert sorted(i for s in folder.jobs()["submitted"] for i in s["indices"]) == list(range(18))


def test_trials_per_task_group_each_node_types_trials_in_their_order(fake_slurm, tmp_path):
    """--trials-per-task 4: 9 trials in tasks of 4, 4 and 1, in the node type's shuffled order
    (the trial files, so the order and the statistics are a sweep's as ever)."""
    folder = _folder(tmp_path)
    folder.options["trials_per_task"] = 4
    fake_slurm.setenv("FAKE_OUT", "41\n")
    submit(folder)
    a100 = next(j for j in folder.jobs()["submitted"] if j["node_type"] == "a100")
    assert a100["tasks"] == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    assert [folder.trial(i).number for task in a100["tasks"] for i in task] == list(range(1, 10))


def test_a_trial_index_the_sweep_does_not_have_is_named(tmp_path):
    folder = _folder(tmp_path)
    with pytest.raises(FolderError, match="this sweep has no trial 99 \\(it has trials 0 to 17\\)"):
        folder.trial(99)


def test_a_group_writable_part_is_refused_only_where_the_group_has_others(tmp_path):
    """Under umask 002 a user's own group (no other members) may write the folder; a group
    with other members may not, unless the sweep names it (--shared-group), and the refusal
    says which path and which bit."""
    folder = _folder(tmp_path)
    os.chmod(folder.path / "results", 0o775)  # the user's own group: nobody else can write it
    assert load(folder.path).id == folder.id
    shared = grp.getgrnam("nogroup")  # members: nobody and the daemons whose own group it is
    os.chown(folder.path / "results", -1, shared.gr_gid)
    with pytest.raises(FolderError, match=r"results: group nogroup may write it \(mode 775: the g\+w bit\) and has "
                                          r"members besides you .*--shared-group nogroup"):
        load(folder.path)
    plan = folder.plan
    team = create(tmp_path / "team", plan, plan.candidates(), folder.node_types,
                  {"cwd": "/", **resources.checked({"shared_group": "nogroup"})})
    assert stat.S_IMODE(team.path.stat().st_mode) == 0o2775 and team.path.stat().st_gid == shared.gr_gid
    assert load(team.path).shared_gid == shared.gr_gid
