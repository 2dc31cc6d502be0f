"""The doctor's cure is what the user gets: its warm arm runs the command it advises (`tflaunch
run --warm --profile NAME -- /abs/python SCRIPT`, the profile saved by the doctor, the
interpreter it measured by absolute path), timed from that command to the ready point;
every run is stored in History like any arm's; and .pyc is judged only from an X-ray it took.

On the public program of the issue (a custom train_step) the doctor said 0.21x and
`tflaunch run --warm` as told gave 0.48x: the CLI's own start was outside its figure, and
`python` on PATH was another interpreter, which ran cold.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import pytest

from tflaunch.core.doctor import experiment, warm_arm
from tflaunch.core.doctor.experiment import Diagnosis
from tflaunch.core.doctor.remedies import examine
from tflaunch.core.doctor.report import diagnosis_json, report_summary
from tflaunch.core.doctor.verdict import saving
from tflaunch.core.paths import profiles_dir
from tflaunch.core.run import events as ev
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.warm.warm_start import stop_servers
from tflaunch.core.run.words import start_kind
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import Profile, ProfileStore
from tflaunch.core.store.recorder import RunRecorder
from tflaunch.core.store.replaced_profiles import kept_copies

PROGRAM = ("import tensorflow as tf\n"
           "from tflaunch_mark import mark\n"
           "print('sum', float(tf.reduce_sum(tf.ones((4, 4)))), flush=True)\n"
           "mark('ready')\n")


@pytest.fixture
def runtime(monkeypatch):
    folder = tempfile.mkdtemp(prefix="tfl-", dir="/tmp")  # short: a socket's path has 107 bytes at most
    monkeypatch.setenv("TFLAUNCH_RUNTIME_DIR", folder)
    yield
    stop_servers()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow  # seven real launches; the warm arm's decisions have fast tests
def test_the_warm_arm_runs_the_advised_command_and_stores_every_run(tmp_path, runtime, monkeypatch):
    (tmp_path / "train.py").write_text(PROGRAM)
    # A bare `python` is the chosen interpreter (this venv's); the `python` first on PATH is
    # another one (pyenv's, the system's), so the advice names the one measured by its path.
    monkeypatch.setenv("PATH", f"{tmp_path / 'elsewhere'}{os.pathsep}{os.environ.get('PATH', '')}")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "python").write_text("#!/bin/sh\necho 'not the measured python' >&2; exit 3\n")
    (tmp_path / "elsewhere" / "python").chmod(0o755)
    base = LaunchConfig(python=sys.executable, program=("python", "train.py"), workdir=str(tmp_path),
                        until="mark:ready", steady=0, log_level=2, timeout=120)
    history = History(tmp_path / "history.sqlite3")
    arm = warm_arm.measure(base, 3, print, RunRecorder(history, "doctor"))
    assert arm.note is None, arm.note
    python = os.path.abspath(sys.executable)
    assert arm.command[-7:] == ["run", "--warm", "--profile", "doctor-warm-train", "--", python, "train.py"]
    assert os.path.isabs(arm.command[-2]), "the interpreter measured, by its path"
    assert arm.advice.endswith(f"-- {python} train.py (in {tmp_path})")
    # Every run in History, labelled as an arm's trials are: a warm-up, then cold and warm alternated.
    runs = [history.load(s.id) for s in history.list_runs()]
    trials = [json.loads(history._db.execute("SELECT trial FROM runs WHERE id=?", (r.history_id,)).fetchone()[0])
              for r in runs]
    assert sorted(t["candidate"] for t in trials) == ["cold start"] * 3 + ["warm start"] * 4
    assert [t["warmup"] for t in trials].count(True) == 1
    warm = [r for r, t in zip(runs, trials, strict=True) if t["candidate"] == "warm start"]
    assert all(start_kind(r) == "warm" and r.warm_start is not None for r in warm)
    # The first warm launch started the server and said so; it is the uncounted warm-up.
    first = min(warm, key=lambda r: r.launched_at)
    assert first.warm_start is not None and first.warm_start.server_started
    assert arm.saving is not None and arm.saving.runs == 3
    if arm.saving.significant:  # the profile the advice names, with the runs as its evidence
        assert ProfileStore(profiles_dir()).load("doctor-warm-train").evidence["runs"] == 3
    else:
        assert "doctor-warm-train" not in [e.name for e in ProfileStore(profiles_dir()).entries()]


def test_the_advice_is_the_measured_command_with_its_profile():
    base = LaunchConfig(program=("python", "train.py"), workdir="/work/proj")
    exam = examine(base, RunRecord(base), has_gpu=False, only={"warm"})
    d = Diagnosis(exam, baseline=[])
    d.warm = saving([1.1, 1.0, 1.2, 1.1, 1.0], [9.8, 10.1, 9.9, 10.0, 10.2])
    d.warm_arm = warm_arm.WarmArm(d.warm, None, ["tflaunch", "run", "--warm", "--profile", "doctor-warm-train", "--",
                                                 "/home/u/venv/bin/python", "train.py"], "doctor-warm-train",
                                  "/work/proj")
    command = "tflaunch run --warm --profile doctor-warm-train -- /home/u/venv/bin/python train.py (in /work/proj)"
    summary = report_summary(d)
    assert summary[0].endswith(f"start it with {command}.")
    assert any(command in line and "each timed from the command to the ready point" in line for line in summary)
    assert "NAME" not in " ".join(summary) and "your_script.py" not in " ".join(summary)
    data = diagnosis_json(d)["warm_start"]
    assert data["command"][-2:] == ["/home/u/venv/bin/python", "train.py"] and data["profile"] == "doctor-warm-train"


def test_pyc_is_judged_only_from_an_import_xray_taken():
    """For a program the doctor said ".pyc files are present" with no X-ray at all."""
    base = LaunchConfig(program=("python", "train.py"))
    exam = examine(base, RunRecord(base), has_gpu=False, only={"pyc"})
    assert exam.skipped["pyc"].startswith("not judged: no import X-ray was taken")
    xray = _xray(checked=400, uncached=0, folder="/site/tensorflow")
    judged = examine(base, RunRecord(base), has_gpu=False, only={"pyc"}, imports=xray)
    assert judged.skipped["pyc"] == "TensorFlow's .pyc files are present (the import X-ray found them compiled)"


def test_pyc_files_missing_from_a_folder_the_xray_did_not_find_are_not_compiled(tmp_path, monkeypatch):
    """The X-ray says "" for a package folder it did not find: the doctor ran `python -m compileall
    -q ''`, said it had compiled TensorFlow's modules and measured a .pyc arm on an empty prefix.
    Now the arm is left out, saying there is no folder to compile."""
    ran, said = [], []
    monkeypatch.setattr(experiment.subprocess, "run", lambda argv, **_: ran.append(argv))
    monkeypatch.setattr(experiment, "cache_dir", lambda: tmp_path)
    base = LaunchConfig(program=("python", "train.py"))
    missing = _xray(checked=400, uncached=400, folder="")
    prefix = experiment._pyc_prefix(base, missing, said.append)
    assert (prefix, ran, said) == (None, [], [])
    judged = examine(base, RunRecord(base), has_gpu=False, only={"pyc"}, pyc_prefix=prefix, imports=missing)
    assert judged.skipped["pyc"] == "TensorFlow's .pyc files are missing, but there is no folder to compile them into"
    found = experiment._pyc_prefix(base, _xray(checked=400, uncached=400, folder="/site/tensorflow"), said.append)
    assert found is not None and ran[0][-2:] == ["-q", "/site/tensorflow"] and "compiling" in said[0]


def _xray(**tensorflow):
    """An import X-ray whose TensorFlow .pyc facts are `tensorflow`, checked as a child's is."""
    return ev.checked_imports({"total": 2.0, "modules": 3000, "native": 0.5, "native_share": 0.25, "compiled": {
        "tensorflow": {"modules": 1600, "written": 0, **tensorflow}}})


def test_a_profile_name_follows_the_program():
    assert warm_arm.profile_name(("python", "examples/custom train_step.py", "--epochs", "1")) == \
        "doctor-warm-custom-train_step"
    assert warm_arm.profile_name(("python", "-m", "pkg.train")) == "doctor-warm-pkg.train"
    assert warm_arm.profile_name(("python", "-c", "pass")) == "doctor-warm-program"


def test_a_launch_inside_a_launch_keeps_one_hook_on_the_path():
    from tflaunch.core.settings.child import HOOK_DIR, child_environment

    once = child_environment(LaunchConfig(), {"PYTHONPATH": "/mine"}, launch_hook=True)
    twice = child_environment(LaunchConfig(), once, launch_hook=True)
    assert once["PYTHONPATH"] == twice["PYTHONPATH"] == f"{HOOK_DIR}{os.pathsep}/mine"
    assert child_environment(LaunchConfig(), {}, launch_hook=True)["PYTHONPATH"] == str(HOOK_DIR)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_profile_of_the_arm_s_name_is_put_back_as_it_was_when_nothing_is_advised(tmp_path, runtime):
    """The arm saved its profile over one of that name and then deleted it: the user's
    accepted doctor-warm-train, advised an earlier day, was gone (issue 43, item 2)."""
    (tmp_path / "train.py").write_text("raise SystemExit(3)\n")
    store = ProfileStore(profiles_dir())
    mine = store.save(Profile("doctor-warm-train", LaunchConfig(intra=3, extra_env={"MY_FLAG": "1"}), {"runs": 5}))
    before = mine.read_bytes()
    base = LaunchConfig(python=sys.executable, program=("python", "train.py"), workdir=str(tmp_path),
                        until="exit", steady=0, log_level=2, timeout=120)
    arm = warm_arm.measure(base, 3, print)
    assert arm.note and arm.note.startswith("warm start could not be measured"), arm.note
    assert mine.read_bytes() == before and not store.unaccepted_code(store.load("doctor-warm-train"))
    assert not kept_copies(mine), "put back, so no copy is left over"
