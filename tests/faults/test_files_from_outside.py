"""Files from outside (issue 33): a damaged, huge, endless or blocking file loses itself, never
the list, and never stalls the launcher. Each case failed before its fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tflaunch.core.paths import profiles_dir
from tflaunch.core.probe.outside_files import UnreadableFileError, read_capped
from tflaunch.core.store.profiles import ProfileError, ProfileStore

from ..builders import TFLAUNCH, tflaunch

HEAD = 'schema_version = 1\nname = "x"\n'
GOOD = HEAD + '[settings]\nmodel = "sample:mlp"\nintra = 2\n'
DEEP_ARRAY = "[" * 5000 + "]" * 5000
# The shapes found from outside, each of which stopped `profiles list` for every profile.
DAMAGED = {
    "baseline-list": GOOD + "[evidence]\nbaseline = [1, 2]\n",
    "model-number": HEAD + "[settings]\nmodel = 5\n",
    "deep-array": GOOD + f"[evidence]\nx = {DEEP_ARRAY}\n",
    "deep-tables": GOOD + "[evidence]\n" + "x = " + "{a = " * 40 + "1" + "}" * 40 + "\n",
    "ready-list": GOOD + "[evidence]\ntime_to_ready = [1]\n",
    "environment-number": GOOD + "[evidence]\nenvironment = 5\n",
    "gpus-numbers": GOOD + "[evidence]\ngpus = [1, 2]\n",
    "python-number": HEAD + "[settings]\npython = 5\n",
    "log-level-list": HEAD + "[settings]\nlog_level = [1]\n",
    "phases-numbers": GOOD + "[evidence]\nphases = {import = 5}\n",
    "evidence-number": HEAD + "evidence = 5\n[settings]\nintra = 1\n",
    "inputs-table": HEAD + "[settings]\ninputs = {a = {b = 1}}\n",
    "not-utf8": None,  # bytes, below
}


def _damaged_folder() -> Path:
    folder = profiles_dir()
    folder.mkdir(parents=True)
    for name, text in DAMAGED.items():
        if text is not None:
            (folder / f"{name}.toml").write_text(text)
    (folder / "not-utf8.toml").write_bytes(GOOD.encode() + b'[evidence]\nmodel = "\xff\xfe"\n')
    (folder / "good.toml").write_text(GOOD)
    return folder


def test_one_damaged_profile_loses_itself_not_the_list():
    _damaged_folder()
    entries = {e.name: e for e in ProfileStore(profiles_dir()).entries()}
    assert entries["good"].profile is not None and entries["good"].profile.config.intra == 2
    broken = {name for name, e in entries.items() if e.profile is None}
    assert broken == set(DAMAGED), broken
    listed = tflaunch("profiles", "list")
    assert listed.returncode == 1 and "Traceback" not in listed.stderr
    assert "good  sample:mlp  intra=2" in listed.stdout
    for name in DAMAGED:
        assert f"{name}  BROKEN: " in listed.stdout, name
    assert "settings.model must be text, not int" in listed.stdout
    assert "evidence.baseline must be a table of speedup" in listed.stdout


def test_the_app_s_profiles_tab_lists_the_damaged_and_the_good(window):
    _damaged_folder()
    view = window.profiles_view
    view.refresh()
    texts = [view.list.item(i).text() for i in range(view.list.count())]
    assert "good" in texts and sum(t.endswith("(broken)") for t in texts) == len(DAMAGED)
    view.select("model-number")
    assert "settings.model must be text" in view.detail.toPlainText()


def test_a_huge_profile_is_refused_with_its_size_without_reading_it(tmp_path):
    huge = tmp_path / "huge.toml"
    huge.write_text(GOOD + "[evidence]\npad = \"" + "x" * (22 << 20) + "\"\n")
    began = time.monotonic()
    with pytest.raises(ProfileError, match=f"is {huge.stat().st_size} bytes; tflaunch reads at most"):
        ProfileStore(profiles_dir()).import_file(huge)
    profiles_dir().mkdir(parents=True)
    shutil.copy(huge, profiles_dir() / "huge.toml")
    (entry,) = ProfileStore(profiles_dir()).entries()
    assert entry.profile is None and "bytes; tflaunch reads at most" in (entry.problem or "")
    assert time.monotonic() - began < 5, "refused from its size, not after parsing 22 MB"


def test_a_fifo_or_a_link_out_of_the_folder_is_one_broken_profile(tmp_path):
    folder = profiles_dir()
    folder.mkdir(parents=True)
    os.mkfifo(folder / "waits.toml")
    outside = tmp_path / "theirs.toml"
    outside.write_text(GOOD)
    (folder / "linked.toml").symlink_to(outside)
    (folder / "zero.toml").symlink_to("/dev/zero")
    (folder / "good.toml").write_text(GOOD)
    listed = tflaunch("profiles", "list", timeout=60)
    assert "good  sample:mlp" in listed.stdout
    assert "waits  BROKEN: " in listed.stdout and "FIFO" in listed.stdout
    assert "linked  BROKEN: " in listed.stdout and "outside" in listed.stdout
    assert "zero  BROKEN: " in listed.stdout


def test_read_capped_refuses_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", Path("/dev/zero"), tmp_path):
        with pytest.raises(UnreadableFileError, match="not a regular file"):
            read_capped(str(path), 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(UnreadableFileError, match="is 101 bytes"):
        read_capped(str(tmp_path / "big"), 100)
    assert read_capped(str(tmp_path / "big"), 101) == b"x" * 101


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_keras_model_that_never_ends_is_refused_before_it_is_read(tmp_path, kind):
    model = tmp_path / "model.keras"
    if kind == "fifo":
        os.mkfifo(model)
    else:
        model.symlink_to("/dev/zero")
    done = tflaunch("bench", "--model", str(model), timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "not a regular file" in done.stderr and str(model) in done.stderr


def test_a_saved_model_holding_a_fifo_is_refused_cold_or_warm(tmp_path, models):
    folder = tmp_path / "saved"
    shutil.copytree(models["mlp"]["savedmodel"], folder)
    os.mkfifo(folder / "variables" / "extra.data")
    for cache in ("cold", "warm"):
        done = tflaunch("bench", "--model", str(folder), "--page-cache", cache, timeout=60)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "extra.data is a FIFO" in done.stderr


def test_paths_that_are_not_utf8_get_a_message(tmp_path):
    folder = os.fsencode(tmp_path) + b"/bad\xff"
    os.mkdir(folder)
    with open(folder + b"/s.py", "w") as f:
        f.write("print(1)\n")
    for args in ([b"--model", folder + b"/m.keras"], [b"--", os.fsencode(sys.executable), folder + b"/s.py"]):
        done = subprocess.run([*map(os.fsencode, TFLAUNCH), b"bench", *args], capture_output=True, timeout=120)
        assert done.returncode == 2 and b"Traceback" not in done.stderr, done.stderr
        assert b"bad\\xff" in done.stderr and b"is not valid UTF-8" in done.stderr
