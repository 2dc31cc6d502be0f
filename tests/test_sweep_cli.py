"""A real small sweep on sample:mlp, end to end through `tflaunch sweep`."""

from __future__ import annotations

import json
import subprocess
import sys

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import ProfileStore

TFLAUNCH = [sys.executable, "-m", "tflaunch.gui.main"]


def sweep(*args, timeout=600):
    return subprocess.run([*TFLAUNCH, "sweep", "--model", "sample:mlp", "--steady", "1", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_a_real_sweep_stores_every_trial_and_saves_the_winner():
    done = sweep("--vary", "intra=1,2", "--repeat", "2", "--warmup", "1", "--no-racing", "--json",
                 "--save-winner", "fastest")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["status"] == "done" and result["trials_run"] == 3 * (1 + 2) == result["trials_without_racing"]
    settings = {r["setting"] for r in result["results"]}
    assert settings == {"baseline", "intra=1", "intra=2"}
    for r in result["results"]:
        assert len(r["values"]) == 2 and r["min"] <= r["median"] <= r["max"] and r["ratio_ci"][0] <= r["ratio_ci"][1]
    assert result["verdict"].startswith(result["winner"])
    history = History(history_path())
    (sweep_id, _created, model, status, summary), = history.list_sweeps()
    assert (model, status, summary) == ("sample:mlp", "done", result["verdict"])
    trials = history.sweep_trials(sweep_id)
    assert len(trials) == 9 and sum(t["warmup"] for t, _ in trials) == 3
    profile = ProfileStore(profiles_dir()).load("fastest")
    assert profile.evidence["sweep"]["trials"] == 9 and profile.evidence["runs"] == 2
    assert "[9/≤9]" in done.stderr


def test_bad_plans_are_refused_before_any_trial():
    assert "cannot vary 'colour'" in sweep("--vary", "colour=red").stderr
    bad = sweep("--vary", "intra=one,two")
    assert bad.returncode == 2 and "'one' is not a value for intra" in bad.stderr
    assert "expected SETTING=V1,V2" in sweep("--vary", "intra").stderr


def test_two_instances_at_once():
    done = sweep("--vary", "intra=1", "--repeat", "1", "--warmup", "0", "--instances", "2", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(History(history_path()).list_runs()) == 2 * 2, "each trial stores both of its instances"
