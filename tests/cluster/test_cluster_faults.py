"""Faults found by attacking cluster sweeps from outside: damaged or foreign files in the
folder, Slurm answers that are not errors, and merges at the same time (unit tests, no
cluster: fake sbatch/squeue/scancel on PATH)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tflaunch.core.cluster import slurm
from tflaunch.core.cluster.folder import FolderError, load
from tflaunch.core.cluster.merge import merge
from tflaunch.core.cluster.preflight import check_script
from tflaunch.core.cluster.status import trial_states
from tflaunch.core.cluster.submit import cancel, submit
from tflaunch.core.cluster.trial import _write
from tflaunch.core.store.history import History, HistoryError

from ..builders import finished_record, tflaunch
from .test_cluster_files import _folder, fake_slurm  # noqa: F401  (a fixture)


def test_a_sweep_whose_jobs_slurm_has_forgotten_is_not_an_error(fake_slurm, tmp_path):  # noqa: F811
    """Slurm forgets a job MinJobAge (300 s) after it ends, and squeue then refuses its id:
    status must still answer (from the files), not fail for ever after."""
    folder = _folder(tmp_path, repeat=1)
    folder.add_submission("5", "a100", [0, 1])
    folder.exit_path(1).write_text("0\n")
    fake_slurm.setenv("FAKE_RC", "1")
    fake_slurm.setenv("FAKE_ERR", "slurm_load_jobs error: Invalid job id specified\n")
    states = {s.index: s for s in trial_states(folder)}
    assert states[0].state == "lost" and "no longer holds it" in states[0].detail


def test_sbatch_refusing_an_option_names_it(fake_slurm):  # noqa: F811
    """sbatch names the option on one line and says `Try "sbatch --help"` on the last."""
    fake_slurm.setenv("FAKE_RC", "255")
    fake_slurm.setenv("FAKE_ERR", "sbatch: unrecognized option '--nonsense=1'\n"
                                  "Try \"sbatch --help\" for more information\n")
    with pytest.raises(slurm.SlurmError, match="unrecognized option '--nonsense=1'"):
        slurm.submit("/x/job.sh", [0], ["--nonsense=1"])


def test_a_percent_in_the_folders_path_is_not_read_as_slurms(fake_slurm, tmp_path):  # noqa: F811
    """--output=DIR/logs/%A_%a.out: a DIR of `p%j` made Slurm write the logs under p<job id>,
    which does not exist, so every task failed before it started."""
    folder = _folder(tmp_path / "p%j %A", repeat=1)
    calls = tmp_path / "sbatch-calls"
    sbatch = Path(os.environ["PATH"].split(os.pathsep)[0]) / "sbatch"
    sbatch.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{calls}"\necho 41\n')
    submit(folder, indices=[0])
    logs = str(folder.path / "logs").replace("%", "%%")
    assert f"--output={logs}/%A_%a.out" in calls.read_text().splitlines()


def test_a_backslash_in_the_shared_folder_is_refused_before_anything_is_made(tmp_path):
    with pytest.raises(FolderError, match="backslash.*--shared-dir"):
        _folder(tmp_path / "a\\b", repeat=1)
    assert not (tmp_path / "a\\b").exists()


def _result(folder, index: int) -> dict:
    """A result as a node writes it, read back as JSON to be tampered with."""
    trial = folder.trial(index)
    assert _write(folder, trial, {"host": "n1", "gpu_models": []}, 1000.0, [finished_record()], None) == 0
    return dict(json.loads(folder.result_path(index).read_text()))


def test_a_run_that_names_another_trial_or_none_is_refused_not_merged_again_and_again(tmp_path):
    """The history keeps a run as the trial its info names: a run in 0000.json naming trial 2
    was stored as trial 2, and every merge then found trial 0 missing and trial 2 changed
    (2 runs added, 2 replaced, each time); one naming no trial made the whole history
    sweep unreadable ('Run 1 ... is damaged') for every later merge."""
    folder = _folder(tmp_path, repeat=1)
    good = _result(folder, 0)
    other = json.loads(json.dumps(good))
    info = json.loads(other["runs"][0]["run"]["trial"])
    other["runs"][0]["run"]["trial"] = json.dumps({**info, "index": 2})
    folder.result_path(0).write_text(json.dumps(other))
    none = json.loads(json.dumps(_result(folder, 1)))
    none["runs"][0]["run"]["trial"] = None
    folder.result_path(1).write_text(json.dumps(none))
    _result(folder, 2)
    states = {s.index: s for s in trial_states(folder, ask_slurm=False)}
    for index in (0, 1):
        assert states[index].state == "failed" and states[index].result is None
        assert f"not of trial {index}" in states[index].detail and "resubmit" in states[index].detail
    assert states[2].state == "done"
    history = History(tmp_path / "history.sqlite3")
    merge(folder, list(states.values()), history)
    merge(folder, trial_states(folder, ask_slurm=False), history)
    (sweep_id, *_), = [s for s in history.list_sweeps() if history.sweep_plan(s[0])["cluster"]["node_type"] == "a100"]
    assert [t.index for t, _ in history.sweep_trials(sweep_id)] == [2]


def test_a_result_nested_too_deep_for_json_is_damaged_not_a_traceback(tmp_path):
    folder = _folder(tmp_path, repeat=1)
    folder.result_path(0).write_text("[" * 100_000 + "]" * 100_000)
    (state,) = [s for s in trial_states(folder, ask_slurm=False) if s.index == 0]
    assert state.state == "failed" and "cannot be read" in state.detail


def test_a_trial_file_naming_another_index_is_refused(tmp_path):
    """Its result would be written over another trial's."""
    folder = _folder(tmp_path, repeat=1)
    data = json.loads(folder.trial_path(1).read_text())
    folder.trial_path(1).write_text(json.dumps({**data, "index": 0}))
    with pytest.raises(FolderError, match="0001.json.*index 0 in the file of trial 1"):
        folder.trial(1)


@pytest.mark.parametrize("part", ["trials/0001.json", "results", "exits", "logs", "check"])
def test_a_trial_file_or_a_folder_the_nodes_write_into_that_others_may_write_is_refused(tmp_path, part):
    """A trial file others may write runs their interpreter as you; in exits/ (written by
    job.sh's shell) or results/ another user could put a link where a node writes."""
    folder = _folder(tmp_path, repeat=1)
    os.chmod(folder.path / part, 0o666 if part.endswith(".json") else 0o777)
    with pytest.raises(FolderError, match=f"{part}: anyone may write it \\(mode (666|777): the o\\+w bit\\)"):
        load(folder.path).trials()


def test_two_merges_at_once_store_each_run_once(tmp_path, monkeypatch):
    """Two `sweep merge` at the same moment each found the trials missing, then each stored
    them (11 rows for 3 runs, seen with four at once). The second merge here runs just
    after the first has looked at what is stored: it must wait (here: give up) until the
    first has written, not store the runs beside it."""
    folder = _folder(tmp_path, repeat=1)
    for index in range(3):
        _result(folder, index)
    states = trial_states(folder, ask_slurm=False)
    path = tmp_path / "history.sqlite3"
    first, second = History(path), History(path)
    monkeypatch.setattr("tflaunch.core.cluster.merge.MERGE_WAIT_S", 0.2, raising=False)
    looked = first.sweep_trials
    outcomes = []

    def another_merge_meanwhile(sweep_id):
        found = looked(sweep_id)
        if not outcomes:
            try:
                merge(folder, states, second)
                outcomes.append("merged beside")
            except HistoryError as exc:
                outcomes.append(exc.kind)
        return found

    monkeypatch.setattr(first, "sweep_trials", another_merge_meanwhile)
    merge(folder, states, first)
    merge(folder, states, second)
    assert outcomes == ["locked"]
    (sweep_id, *_), = [s for s in first.list_sweeps() if first.sweep_plan(s[0])["cluster"]["node_type"] == "a100"]
    assert sorted(t.index for t, _ in second.sweep_trials(sweep_id)) == [0, 1, 2]


@pytest.mark.parametrize("jobs", [
    '{"submitted": [{"job_id": 5, "node_type": "a100", "indices": [0]}]}',
    '{"submitted": [{"node_type": "a100", "indices": [0]}]}',
    '{"submitted": [{"job_id": "5", "node_type": "a100", "indices": "abc"}]}',
    '{"submitted": [{"job_id": "5", "node_type": "a100", "indices": [0], "offset": "z"}]}',
    '{"submitted": [], "cancelled": 5}',
    '{"submitted": ["5"]}',
])
def test_a_damaged_jobs_file_is_said_with_what_to_do_not_a_traceback(fake_slurm, tmp_path, jobs):  # noqa: F811
    """Each of these raised KeyError, TypeError or ValueError through status, resubmit and cancel."""
    folder = _folder(tmp_path, repeat=1)
    folder.jobs_path.write_text(jobs)
    for act in (trial_states, cancel):
        with pytest.raises(FolderError, match="jobs.json: not the submissions tflaunch wrote.*move it aside"):
            act(folder)


@pytest.mark.parametrize("option", ["--trial-seconds=nan", "--trial-seconds=inf", "--trial-seconds=-1",
                                    "--time=soon", "--mem=lots", "--account=-x", "--trials-per-task=0"])
def test_a_resource_sbatch_would_refuse_is_refused_before_anything_is_made(tmp_path, option):
    """Each named resource is checked where it enters (nan trial seconds would make tasks of no trials)."""
    done = tflaunch("sweep", "--on", "slurm", "--model", "sample:mlp", "--vary", "intra=1,2",
                    "--shared-dir", str(tmp_path), option)
    assert done.returncode == 2 and option.split("=")[0] in done.stderr, done.stderr
    assert not list(tmp_path.iterdir()), "nothing made"


def test_the_commands_a_message_gives_can_be_pasted_into_a_shell(tmp_path):
    """A shared folder with a space, a quote or $( ) in its name: the resubmit in the message
    is one argument, and runs nothing of the name's."""
    folder = _folder(tmp_path / "it's $(id) here", repeat=1)
    folder.result_path(0).write_text("{}")
    (state,) = [s for s in trial_states(folder, ask_slurm=False) if s.index == 0]
    command = state.detail.split("`")[1]
    assert shlex.split(command) == ["tflaunch", "sweep", "resubmit", str(folder.path)]


def test_a_running_task_shows_no_wait_reason(fake_slurm, tmp_path):  # noqa: F811
    """squeue gives every task of an array limited by %K the reason JobArrayTaskLimit, the
    running ones too: status showed 'running  JobArrayTaskLimit'."""
    folder = _folder(tmp_path, repeat=1)
    folder.add_submission("42", "a100", [0, 1])
    fake_slurm.setenv("FAKE_OUT", "42_0|RUNNING|JobArrayTaskLimit\n42_1|PENDING|JobArrayTaskLimit\n")
    states = {s.index: (s.state, s.detail) for s in trial_states(folder)}
    assert states[0] == ("running", "") and states[1] == ("pending", "JobArrayTaskLimit")


def test_the_check_script_quotes_the_interpreter_in_every_line(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.executable", "/opt/it's here/python")
    folder = _folder(tmp_path, repeat=1)
    script = check_script(folder, folder.node_types[0])
    done = subprocess.run(["sh", "-n", "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_a_cluster_only_option_for_a_run_here_is_said_not_ignored(tmp_path, command):
    """`--time 60` was argparse's abbreviation of --timeout; it is Slurm's time limit now,
    and a local run that gets it (or --mem, --setup ...) says so instead of dropping it."""
    done = tflaunch(command, "--model", "sample:mlp", "--time", "60", "--setup", "x",
                    *(["--vary", "intra=2"] if command == "sweep" else []))
    assert done.returncode == 2 and "--time, --setup are for a Slurm cluster: add --on slurm" in done.stderr
