"""A real small sweep on sample:mlp, end to end through `tflaunch sweep`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import ProfileStore

from .builders import fake_python, slow_python, tflaunch
from .fake_child import CHILD_ENV

TFLAUNCH = [sys.executable, "-m", "tflaunch.gui.main"]


def sweep(*args, timeout=600):
    return subprocess.run([*TFLAUNCH, "sweep", "--model", "sample:mlp", "--steady", "1", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow  # a whole real sweep of real TensorFlow children
def test_a_real_sweep_stores_every_trial_and_saves_a_clear_winner(tmp_path):
    done = sweep("--python", slow_python(tmp_path), "--env", "DELAY=3", "--vary", "env.DELAY=0", "--repeat", "3",
                 "--warmup", "0", "--no-racing", "--json", "--save-winner", "fastest")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["status"] == "done" and result["trials_run"] == 2 * 3 == result["trials_without_racing"]
    assert {r["setting"] for r in result["results"]} == {"baseline", "env.DELAY=0"}
    for r in result["results"]:
        assert len(r["values"]) == 3 and r["min"] <= r["median"] <= r["max"] and r["ratio_ci"][0] <= r["ratio_ci"][1]
    assert result["winner"] == "env.DELAY=0" and result["verdict"].startswith("Winner: env.DELAY=0")
    history = History(history_path())
    (sweep_id, _created, model, status, summary), = history.list_sweeps()
    assert (model, status, summary) == ("sample:mlp", "done", result["verdict"])
    trials = history.sweep_trials(sweep_id)
    assert len(trials) == 6 and not any(t.warmup for t, _ in trials)
    profile = ProfileStore(profiles_dir()).load("fastest")
    assert profile.evidence["sweep"]["trials"] == 6 and profile.evidence["runs"] == 3
    assert profile.config.extra_env == {"DELAY": "0"}
    assert "[6/≤6]" in done.stderr


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_sweep_with_too_few_trials_names_no_winner_and_saves_nothing():
    done = sweep("--vary", "intra=1", "--repeat", "2", "--warmup", "0", "--no-racing", "--json",
                 "--save-winner", "fastest")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["winner"] is None and "not enough runs" in result["verdict"] + done.stderr
    assert all(r["ratio_ci"] is None for r in result["results"]), "two trials give no interval"
    assert "profile fastest not saved" in done.stderr.splitlines()[-1]
    assert not (profiles_dir() / "fastest.toml").exists()


def test_bad_plans_are_refused_before_any_trial():
    assert "cannot vary 'colour'" in sweep("--vary", "colour=red").stderr
    bad = sweep("--vary", "intra=one,two")
    assert bad.returncode == 2 and "'one' is not a value for intra" in bad.stderr
    assert "expected SETTING=V1,V2" in sweep("--vary", "intra").stderr


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_two_instances_at_once():
    done = sweep("--vary", "intra=1", "--repeat", "1", "--warmup", "0", "--instances", "2", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(History(history_path()).list_runs()) == 2 * 2, "each trial stores both of its instances"


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_format_sweep_converts_the_model_once_and_runs_each_format(tmp_path):
    """The conversion is real (the fake interpreter is the real one without its variable);
    the trials go to the fake child, so this takes seconds."""
    done = sweep("--python", fake_python(tmp_path), "--env", f"{CHILD_ENV}=ok", "--vary", "format=keras,h5",
                 "--repeat", "1", "--warmup", "0", "--json", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "sweep of 3 settings from format (keras, h5); 0 warm-up + 1 measured trials each (3 trials" in done.stderr
    models = {r["setting"]: r["config"]["model"] for r in json.loads(done.stdout)["results"]}
    assert models["baseline"] == "sample:mlp"
    assert models["format=keras"].endswith("mlp.keras") and models["format=h5"].endswith("mlp.h5")
    assert all(os.path.exists(models[f"format={fmt}"]) for fmt in ("keras", "h5"))


@pytest.mark.parametrize("args", [["--vary", "intra=x"], ["--vary", "nosuch=1,2"]])
def test_sweep_json_answers_bad_arguments_in_json(args):
    """Issue 33: a plan the sweep refused printed nothing on stdout under --json."""
    done = tflaunch("sweep", "--json", "--model", "sample:mlp", *args)
    assert done.returncode == 2
    answer = json.loads(done.stdout)
    assert answer["status"] == "failed" and answer["failure"]["kind"] == "invalid_arguments"
    assert answer["failure"]["message"] in done.stderr
