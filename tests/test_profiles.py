"""Launch profiles: round trip, broken and future files, atomic saves that survive kill -9."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import tomllib

import pytest

from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import (
    Profile,
    ProfileError,
    ProfileStore,
    describe_evidence,
    diff,
    evidence_from_runs,
    weak_evidence,
)

from .builders import finished_record


@pytest.fixture
def store(tmp_path) -> ProfileStore:
    return ProfileStore(tmp_path / "profiles")


def make_profile(name="fast", intra=2) -> Profile:
    evidence = evidence_from_runs([finished_record(intra=intra, ready_s=1.0)],
                                  baseline=[finished_record(ready_s=2.0)])
    return Profile(name, LaunchConfig(model="sample:mlp", intra=intra, extra_env={"A": "1"}), evidence)


def test_save_load_round_trip_keeps_settings_and_evidence(store):
    path = store.save(make_profile())
    data = tomllib.loads(path.read_text())
    assert data["schema_version"] == 1 and data["settings"]["intra"] == 2
    loaded = store.load("fast")
    assert loaded.config == make_profile().config
    assert loaded.evidence["runs"] == 1 and loaded.evidence["phases"]["load"]["median"] == pytest.approx(0.2)
    assert loaded.evidence["baseline"]["speedup"] == pytest.approx((0.02 + 2.0) / (0.02 + 1.0))
    assert "memory_limit_mb" not in data["settings"], "TOML has no null: unset values are left out"


def test_export_import_rename_duplicate_delete(store, tmp_path):
    store.save(make_profile())
    store.export("fast", tmp_path / "shared.toml")
    other = ProfileStore(tmp_path / "elsewhere")
    assert other.import_file(tmp_path / "shared.toml").config == make_profile().config
    store.duplicate("fast", "fast copy")
    store.rename("fast copy", "faster")
    assert [e.name for e in store.entries()] == ["fast", "faster"]
    store.delete("faster")
    assert [e.name for e in store.entries()] == ["fast"]
    with pytest.raises(ProfileError, match="exists already"):
        store.save(make_profile())
    with pytest.raises(ProfileError, match="no profile 'nope'.*profiles: fast"):
        store.load("nope")
    with pytest.raises(ProfileError, match="cannot name a profile"):
        store.path("../escape")


def test_diff_names_what_differs(store):
    changes = dict((k, (a, b)) for k, a, b in diff(make_profile(intra=2), make_profile(intra=4)))
    assert changes["settings.intra"] == (2, 4)
    assert "settings.model" not in changes


def test_broken_and_future_profiles_are_listed_with_reasons_and_never_overwritten(store):
    store.folder.mkdir(parents=True)
    (store.folder / "garbled.toml").write_text("schema_version = = 1")
    (store.folder / "future.toml").write_text('schema_version = 7\n[settings]\nmodel = "sample:mlp"\n')
    (store.folder / "alien.toml").write_text('title = "not ours"\n')
    store.save(make_profile("good"))
    entries = {e.name: e for e in store.entries()}
    assert entries["good"].profile is not None and entries["good"].problem is None
    assert "not valid TOML" in entries["garbled"].problem
    assert "newer tflaunch (schema 7)" in entries["future"].problem
    assert "no schema_version" in entries["alien"].problem
    before = (store.folder / "future.toml").read_bytes()
    with pytest.raises(ProfileError, match="kept as it is"):
        store.save(make_profile("future"), overwrite=True)
    assert (store.folder / "future.toml").read_bytes() == before


def test_evidence_needs_a_successful_run():
    with pytest.raises(ProfileError, match="at least one successful run"):
        evidence_from_runs([])


SLOW_WRITER = textwrap.dedent("""
    import os, sys, time
    from tflaunch.core.store import profiles
    from tflaunch.core.settings.config import LaunchConfig
    real_fsync = os.fsync
    def stuck_fsync(fd):
        print("writing", flush=True)
        time.sleep(600)  # killed here: the temporary file is written, the rename not done
    os.fsync = stuck_fsync
    store = profiles.ProfileStore(sys.argv[1])
    store.save(profiles.Profile("fast", LaunchConfig(intra=8)), overwrite=True)
""")


def test_kill_9_during_a_save_leaves_the_old_file_intact(store):
    path = store.save(make_profile())
    before = path.read_bytes()
    writer = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(store.folder)],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert path.read_bytes() == before
    assert [e.name for e in store.entries()] == ["fast"], "the leftover temporary file is not a profile"
    assert store.load("fast").config.intra == 2


def test_evidence_reads_as_sentences_with_units():
    lines = describe_evidence(make_profile().evidence)
    assert lines[0].startswith("Time to ready: median 1.02 s (min 1.02 s, max 1.02 s, 1 run) on sample:mlp")
    assert lines[1].startswith("Weak evidence: 1 run: a single measurement, not a comparison")
    assert lines[2].startswith("1.98× faster than defaults") and lines[2].endswith("over 1 run)")
    assert "(batch 1, 3 calls per run)" in "\n".join(lines)
    assert any(line.startswith("Phases (median): Spawn 20.0 ms, Import 200 ms") for line in lines)
    assert "Peak memory: median 0.0 MiB" in lines  # the test runs peak at 400 bytes


def test_evidence_counts_agree_with_their_nouns_and_fewer_than_three_runs_are_called_weak():
    one = evidence_from_runs([finished_record()])
    assert not any(" 1 runs" in line for line in describe_evidence(one))
    assert weak_evidence(one) == ("Weak evidence: 1 run: a single measurement, not a comparison; measure with "
                                  "--repeat 3 or more (in the app: 3 or more runs of these settings) and save again.")
    two = evidence_from_runs([finished_record(), finished_record(ready_s=1.1)])
    assert weak_evidence(two).startswith("Weak evidence: 2 runs: too few to tell a difference from noise")
    assert weak_evidence(two) in describe_evidence(two)
    three = evidence_from_runs([finished_record(ready_s=s) for s in (1.0, 1.1, 1.2)],
                               baseline=[finished_record(ready_s=2.0)])
    assert "3 runs)" in describe_evidence(three)[0]
    assert weak_evidence(three).startswith("Weak evidence: the baseline has 1 run")  # the speedup rests on it
    assert weak_evidence(evidence_from_runs([finished_record(ready_s=s) for s in (1.0, 1.1, 1.2)])) == ""
    steady = {**one, "steady_per_call": {**one["steady_per_call"], "calls": 1}}
    assert "(batch 1, 1 call per run)" in "\n".join(describe_evidence(steady))


def test_profiles_show_warns_on_weak_evidence(store, capsys, monkeypatch):
    from tflaunch.core.cli.main import main

    monkeypatch.setattr("tflaunch.core.cli.profiles.profiles_dir", lambda: store.folder)
    store.save(make_profile())
    assert main(["profiles", "show", "fast"]) == 0
    out, err = capsys.readouterr()
    assert "runs = 1" in out and "Weak evidence" not in out  # stdout stays the file
    assert err.strip() == ("tflaunch: the profile fast rests on weak evidence: 1 run: a single measurement, not a "
                           "comparison; measure with --repeat 3 or more (in the app: 3 or more runs of these "
                           "settings) and save again.")
    assert main(["profiles", "list"]) == 0
    assert "(median of 1 run; weak evidence)" in capsys.readouterr().out
