"""`tflaunch profiles ...` and `bench --save-profile`, and CLI runs landing in the history."""

from __future__ import annotations

import pytest

from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.store.history import History

from .builders import tflaunch


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_bench_saves_a_profile_from_the_median_of_its_repeats_and_stores_its_runs():
    done = tflaunch("bench", "--model", "sample:mlp", "--steady", "1", "--intra", "1", "--repeat", "2",
                    "--save-profile", "one-thread")
    assert done.returncode == 0, done.stderr
    assert "saved profile one-thread" in done.stderr
    shown = tflaunch("profiles", "show", "one-thread")
    assert "intra = 1" in shown.stdout and "runs = 2" in shown.stdout
    runs = History(history_path()).list_runs()
    assert len(runs) == 2 and {r.source for r in runs} == {"cli"} and runs[0].status == "ok"


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_profiles_list_export_import_rename_diff_delete(tmp_path):
    assert tflaunch("bench", "--model", "sample:mlp", "--steady", "1", "--save-profile", "a",
                    "--no-history").returncode == 0
    assert not history_path().exists(), "--no-history stores nothing"
    export = tmp_path / "a.toml"
    assert tflaunch("profiles", "export", "a", str(export)).returncode == 0
    text = export.read_text().replace("intra = 0", "intra = 4")
    export.write_text(text)
    imported = tflaunch("profiles", "import", str(export), "--name", "b")
    assert imported.returncode == 0 and imported.stdout.strip() == "b"
    diff = tflaunch("profiles", "diff", "a", "b")
    assert "settings.intra: default (TensorFlow decides) -> 4" in diff.stdout  # words, never 0 or None
    assert tflaunch("profiles", "rename", "b", "c").returncode == 0
    listing = tflaunch("profiles", "list").stdout
    assert listing.startswith("a  sample:mlp") and "\nc  sample:mlp  intra=4" in listing
    assert tflaunch("profiles", "delete", "c").returncode == 0
    assert "c  " not in tflaunch("profiles", "list").stdout


def test_a_broken_profile_is_listed_with_its_reason_and_a_nonzero_exit():
    profiles_dir().mkdir(parents=True)
    (profiles_dir() / "bad.toml").write_text("not = [toml")
    done = tflaunch("profiles", "list")
    assert done.returncode == 1 and "bad  BROKEN:" in done.stdout and "not valid TOML" in done.stdout
