"""Nothing overwritten without a yes (issue 43, item 2): a save over a profile of that name
happens only after its user said yes, and keeps the replaced file as a dated copy; the
CLI commands that save at the end of their runs ask before the runs, and a script says
--replace. (merge --save-winner is tested on the real cluster, test_cluster_folder_attacks.)"""

from __future__ import annotations

import os
import subprocess

import pytest

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileError, ProfileStore
from tflaunch.core.store.replaced_profiles import FOLDER, kept_copies

from .builders import fake_python, tflaunch


def _mine(store: ProfileStore, name: str = "mine") -> bytes:
    """A profile its user saved and accepted, with code (a variable not on the allow-list)."""
    path = store.save(Profile(name, LaunchConfig(model="sample:mlp", intra=3, extra_env={"MY_FLAG": "1"}),
                              {"runs": 3}))
    return path.read_bytes()


def test_a_save_over_a_profile_with_the_yes_keeps_the_old_file_dated(tmp_path):
    store = ProfileStore(tmp_path / "profiles")
    before = _mine(store)
    with pytest.raises(ProfileError, match="exists already"):
        store.save(Profile("mine", LaunchConfig(model="sample:mlp", intra=1)))
    assert store.path("mine").read_bytes() == before and not kept_copies(store.path("mine"))
    store.save(Profile("mine", LaunchConfig(model="sample:mlp", intra=1)), overwrite=True)
    (copy,) = kept_copies(store.path("mine"))
    assert store.kept_copy == copy and copy.read_bytes() == before and copy.parent.name == FOLDER
    assert [e.name for e in store.entries()] == ["mine"], "a dated copy is not listed as a profile"
    store.save(Profile("mine", LaunchConfig(model="sample:mlp", intra=2)), overwrite=True)
    assert len(kept_copies(store.path("mine"))) == 2, "a second replacement in the same second keeps its own copy"


def test_a_profile_whose_copy_cannot_be_kept_is_not_replaced(tmp_path):
    store = ProfileStore(tmp_path / "profiles")
    before = _mine(store)
    (store.folder / FOLDER).write_text("a file where the copies' folder goes")
    with pytest.raises(ProfileError, match="was not replaced: a copy of it could not be kept"):
        store.save(Profile("mine", LaunchConfig(model="sample:mlp", intra=1)), overwrite=True)
    assert store.path("mine").read_bytes() == before


def test_bench_over_an_existing_profile_runs_nothing_without_the_yes(tmp_path):
    store = ProfileStore(profiles_dir())
    before = _mine(store)
    done = tflaunch("bench", "--model", "sample:mlp", "--python", fake_python(tmp_path), "--save-profile", "mine",
                    stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "a profile mine exists already" in done.stderr and "--replace" in done.stderr
    assert store.path("mine").read_bytes() == before and not history_path().exists(), "nothing ran, nothing saved"
    as_json = tflaunch("sweep", "--model", "sample:mlp", "--vary", "intra=1,2", "--save-winner", "mine", "--json",
                       stdin=subprocess.DEVNULL)
    assert as_json.returncode == 2 and '"kind": "profile_exists"' in as_json.stdout


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_bench_with_replace_replaces_and_says_where_the_old_one_is(tmp_path):
    store = ProfileStore(profiles_dir())
    before = _mine(store)
    done = tflaunch("bench", "--model", "sample:mlp", "--python", fake_python(tmp_path), "--save-profile", "mine",
                    "--replace", "--no-history")
    assert done.returncode == 0, done.stderr
    (copy,) = kept_copies(store.path("mine"))
    assert copy.read_bytes() == before and f"the profile it replaced is kept as {copy}" in done.stderr


def test_a_terminal_is_asked_before_the_runs_and_no_keeps_the_profile(tmp_path):
    """On a terminal (a pty, the answer typed ahead as a person may): 'n' ends it before
    anything runs."""
    store = ProfileStore(profiles_dir())
    before = _mine(store)
    leader, follower = os.openpty()
    os.write(leader, b"n\n")
    try:
        done = tflaunch("bench", "--model", "sample:mlp", "--python", fake_python(tmp_path), "--save-profile", "mine",
                        stdin=follower, timeout=60)
    finally:
        os.close(follower)
        os.close(leader)
    assert "A profile mine exists already" in done.stdout and "Replace it with the result of these runs" in done.stdout
    assert done.returncode == 1 and "the profile mine is kept as it is" in done.stderr, done.stderr
    assert store.path("mine").read_bytes() == before and not history_path().exists()
