"""A real sweep's folder attacked from outside (issue 33, items 4 and 5): result and exit
files planted by another user or open to anyone, a FIFO, a link to /dev/zero, a huge file,
and a winner saved from a copied folder. Each is refused with its reason; none stalls,
fills memory or crashes a listing, and none reaches a process without a yes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tflaunch.core.cluster.folder import load
from tflaunch.core.paths import profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileStore
from tflaunch.core.store.replaced_profiles import kept_copies

from ..builders import fake_python
from ..fake_child import CHILD_ENV
from .cluster_tools import TFLAUNCH, settle, submit, tflaunch

NOBODY = 65534
ATTACK_TIMEOUT_S = 60  # a FIFO waited for ever, /dev/zero grew merge to 23 GB: each must end well within this


@pytest.fixture(scope="module")
def measured(cluster, tmp_path_factory):
    """One real sweep's folder, settled, with a clear winner (DELAY=0 saves a second): every
    test tampers with a copy of its own."""
    home = tmp_path_factory.mktemp("attacked")
    slow = home / "slow-fake-python"
    slow.write_text(f'#!/bin/sh\nsleep "${{DELAY:-0}}"\nexec {fake_python(home)} "$@"\n')
    slow.chmod(0o755)
    folder = submit("--model", "sample:mlp", "--python", str(slow), "--env", f"{CHILD_ENV}=ok", "--env",
                    "DELAY=1", "--vary", "env.DELAY=0", "--repeat", "3", "--warmup", "0",
                    "--shared-dir", str(cluster.shared), cwd=home)
    assert settle(folder)["counts"] == {"done": 6}
    return folder


@pytest.fixture
def copy(measured, tmp_path):
    target = tmp_path / measured.name
    shutil.copytree(measured, target, symlinks=True)
    return target


def _status(folder: Path) -> dict:
    done = subprocess.run([*TFLAUNCH, "sweep", "status", str(folder), "--json"], capture_output=True, text=True,
                          timeout=ATTACK_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return {t["index"]: t for t in json.loads(done.stdout)["trials"]}


def _faked(copy: Path) -> Path:
    """Trial 0's result, rewritten in place as an attacker's would be (its figures are beside
    the point: whoever may have written it decides)."""
    path = copy / "results" / "0000.json"
    path.write_text(path.read_text())
    return path


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_result_another_user_planted_is_refused_and_not_merged(copy):
    path = _faked(copy)
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o666)
    states = _status(copy)
    assert states[0]["state"] == "failed" and "owned by nobody, not by you" in states[0]["detail"], states[0]
    merged = tflaunch("sweep", "merge", str(copy), "--json")
    assert merged.returncode == 0, merged.stderr
    (part,) = json.loads(merged.stdout)["parts"]
    assert sum(len(r["values"]) for r in part["results"]) == 5, "only the trials tflaunch's own node wrote"


def test_a_result_anyone_may_write_is_refused_with_the_bit(copy):
    os.chmod(_faked(copy), 0o666)
    assert "anyone may write it (mode 666: the o+w bit)" in _status(copy)[0]["detail"]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link", "huge"])
def test_a_result_or_exit_that_is_no_regular_file_or_too_big_is_refused_at_once(copy, kind):
    for path in (copy / "results" / "0000.json", copy / "exits" / "0001"):
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dev-zero-link":
            path.symlink_to("/dev/zero")
        else:
            with open(path, "wb") as f:
                f.truncate(200 << 20)  # 200 MB (sparse): read whole, it took 419 MB of memory
    (copy / "results" / "0001.json").unlink()  # trial 1 now ends on its exit file alone
    states = _status(copy)
    words = {"fifo": "not a regular file (a FIFO)", "dev-zero-link": "a symbolic link (to '/dev/zero')",
             "huge": "209715200 bytes, more than the"}[kind]
    assert states[0]["state"] == "failed" and words in states[0]["detail"], states[0]
    assert states[1]["state"] == "failed" and "its exit status is not used" in states[1]["detail"], states[1]
    assert tflaunch("sweep", "merge", str(copy), timeout=ATTACK_TIMEOUT_S).returncode == 0
    assert tflaunch("report", f"cluster:{copy}", "-o", str(copy.parent / "r.md"),
                    timeout=ATTACK_TIMEOUT_S).returncode == 0


def test_a_winner_saved_from_a_folder_shows_what_it_runs_and_asks(copy):
    """It was saved as an *accepted* profile with no trust list shown: the folder's settings
    are a shared file's, like an import."""
    saved = subprocess.run([*TFLAUNCH, "sweep", "merge", str(copy), "--save-winner", "from-folder"],
                           capture_output=True, text=True, timeout=ATTACK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert f"sets {CHILD_ENV}=ok" in saved.stdout and "comes from the sweep folder's files" in saved.stdout
    assert saved.returncode == 1 and "NOT accepted" in saved.stderr, saved.stderr
    store = ProfileStore(profiles_dir())
    assert store.unaccepted_code(store.load("from-folder")), "saved, not trusted"
    accepted = tflaunch("sweep", "merge", str(copy), "--save-winner", "from-folder", "--yes")
    assert accepted.returncode == 0, accepted.stderr
    assert not store.unaccepted_code(store.load("from-folder"))
    assert load(copy).id  # the folder itself untouched


def test_a_winner_replaces_a_profile_of_that_name_only_after_the_yes_and_keeps_it_dated(copy):
    """It replaced the user's accepted profile before asking, and kept nothing (issue 43)."""
    store = ProfileStore(profiles_dir())
    mine = store.save(Profile("mine", LaunchConfig(model="sample:mlp", intra=3, extra_env={"MY_FLAG": "1"}),
                              {"runs": 3}))
    before = mine.read_bytes()
    refused = subprocess.run([*TFLAUNCH, "sweep", "merge", str(copy), "--save-winner", "mine"],
                             capture_output=True, text=True, timeout=ATTACK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert refused.returncode == 1 and "It replaces your profile mine" in refused.stdout, refused.stdout
    assert "the profile mine" in refused.stderr and "is kept as it is" in refused.stderr, refused.stderr
    assert mine.read_bytes() == before and not kept_copies(mine)
    assert not store.unaccepted_code(store.load("mine")), "still the user's accepted profile"
    replaced = tflaunch("sweep", "merge", str(copy), "--save-winner", "mine", "--yes")
    assert replaced.returncode == 0, replaced.stderr
    (kept,) = kept_copies(mine)
    assert kept.read_bytes() == before and f"the profile it replaced is kept as {kept}" in replaced.stderr
    assert "MY_FLAG" not in mine.read_text()
