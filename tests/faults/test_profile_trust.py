"""Profiles from strangers: nothing a profile would run starts before its user accepted it.

Each case uses a profile that would leave a marker file if its code ran, so "refused"
means "nothing ran", not only "a message was printed".
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from tflaunch.core.paths import profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileError, ProfileStore, UntrustedProfileError
from tflaunch.core.store.trust import code_it_runs

from ..builders import tflaunch


def _foreign(tmp_path: Path, settings: str, name: str = "shared") -> Path:
    """A profile file as it arrives from someone else."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'schema_version = 1\nname = "{name}"\n[settings]\nmodel = "sample:mlp"\n{settings}\n')
    return path


def _sitecustomize(tmp_path: Path, marker: Path) -> Path:
    """A folder whose sitecustomize.py leaves `marker`: what PYTHONPATH would run."""
    folder = tmp_path / "evil-site"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    return folder


def test_a_profile_setting_pythonpath_runs_nothing_until_trusted_and_again_after_an_edit(tmp_path):
    marker = tmp_path / "ran"
    site = _sitecustomize(tmp_path, marker)
    source = _foreign(tmp_path, f'[settings.extra_env]\nPYTHONPATH = "{site}"')
    assert tflaunch("profiles", "import", str(source)).returncode == 0
    listed = tflaunch("profiles", "list")
    assert "NOT ACCEPTED" in listed.stdout

    command = ["run", "--profile", "shared", "--", sys.executable, "-c", "pass"]
    refused = tflaunch(*command)
    assert refused.returncode == 2 and not marker.exists()
    assert "would run code you have not accepted" in refused.stderr
    assert f"sets PYTHONPATH={site}" in refused.stderr and "profiles trust shared" in refused.stderr

    not_asked = tflaunch("profiles", "trust", "shared", stdin=open(os.devnull))  # noqa: SIM115
    assert not_asked.returncode == 1 and "nothing accepted" in not_asked.stderr
    assert "sets PYTHONPATH" in not_asked.stdout, "trust shows what it would accept"
    assert tflaunch("profiles", "trust", "shared", "--yes").returncode == 0
    assert tflaunch(*command).returncode == 0 and marker.read_text() == "ran"

    marker.unlink()
    path = profiles_dir() / "shared.toml"
    path.write_text(path.read_text().replace("sample:mlp", "sample:multi"))
    again = tflaunch(*command)
    assert again.returncode == 2 and not marker.exists(), "a changed file needs acceptance again"
    assert tflaunch("profiles", "trust", "shared", "--revoke").returncode == 0


def test_bench_and_sweep_refuse_a_profile_whose_interpreter_was_not_accepted(tmp_path):
    marker = tmp_path / "ran"
    fake = tmp_path / "their-python"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    tflaunch("profiles", "import", str(_foreign(tmp_path, f'python = "{fake}"')))
    bench = tflaunch("bench", "--profile", "shared", "--json")
    assert bench.returncode == 2 and not marker.exists()
    failure = json.loads(bench.stdout)["failure"]
    assert failure["kind"] == "untrusted_profile" and f"runs the interpreter {fake}" in failure["message"]
    sweep = tflaunch("sweep", "--profile", "shared", "--vary", "intra=1,2")
    assert sweep.returncode == 2 and "runs the interpreter" in sweep.stderr and not marker.exists()
    gui_less = tflaunch("bench", "--intra", "2")
    assert gui_less.returncode == 2 and "--model" in gui_less.stderr and "--profile" in gui_less.stderr


@pytest.mark.parametrize("settings, expected", [
    ('[settings.extra_env]\nLD_PRELOAD = "/tmp/x.so"', "sets LD_PRELOAD=/tmp/x.so"),
    ('[settings.extra_env]\nBASH_ENV = "/tmp/x.sh"', "sets BASH_ENV=/tmp/x.sh"),
    ('[settings.extra_env]\nENV = "/tmp/x.sh"', "sets ENV=/tmp/x.sh"),
    ('[settings.extra_env]\nLD_LIBRARY_PATH = "/tmp/lib"', "sets LD_LIBRARY_PATH=/tmp/lib"),
    ('[settings.extra_env]\nPYTHONSTARTUP = "/tmp/x.py"', "sets PYTHONSTARTUP=/tmp/x.py"),
    ('[settings.extra_env]\nPYTHONHOME = "/tmp/py"', "sets PYTHONHOME=/tmp/py"),
    ('[settings.extra_env]\nLD_BIND_NOW = "1"', "sets LD_BIND_NOW=1"),
    ('imports = ["/tmp/layers.py"]', "imports /tmp/layers.py"),
    ("unsafe_deserialization = true", "Keras safe mode off"),
])
def test_every_kind_of_code_is_named(tmp_path, settings, expected):
    store = ProfileStore(profiles_dir())
    profile = store.import_file(_foreign(tmp_path, settings))
    with pytest.raises(UntrustedProfileError) as refused:
        store.load_for_launch(profile.name)
    assert any(expected in line for line in refused.value.code), refused.value.code


def test_data_only_and_own_profiles_need_no_trust_and_copies_keep_it(tmp_path):
    store = ProfileStore(profiles_dir())
    store.import_file(_foreign(tmp_path, 'intra = 2\n[settings.extra_env]\nTF_CPP_VMODULE = "x=1"', "plain"))
    assert store.load_for_launch("plain").config.intra == 2, "plain data needs no acceptance"
    own = Profile("mine", LaunchConfig(extra_env={"LD_PRELOAD": "/opt/tcmalloc.so"}))
    store.save(own)
    assert store.load_for_launch("mine").config.extra_env["LD_PRELOAD"] == "/opt/tcmalloc.so"
    store.duplicate("mine", "mine too")
    store.rename("mine too", "mine renamed")
    assert store.load_for_launch("mine renamed")
    (tmp_path / "mine.toml").write_text(store.path("mine").read_text())
    store.import_file(tmp_path / "mine.toml", "mine", overwrite=True)
    with pytest.raises(UntrustedProfileError):
        store.load_for_launch("mine")  # an import over an accepted file is a stranger's file
    assert stat.S_IMODE(store.path("plain").stat().st_mode) == 0o644, "profiles are made to be shared"
    assert stat.S_IMODE(store.trust.path.stat().st_mode) == 0o600, "only its user decides what runs"


def test_acceptance_is_for_the_file_that_was_shown(tmp_path):
    store = ProfileStore(profiles_dir())
    shown = store.import_file(_foreign(tmp_path, '[settings.extra_env]\nBASH_ENV = "/tmp/a.sh"'))
    shown = store.load(shown.name)
    path = store.path("shared")
    path.write_text(path.read_text().replace("/tmp/a.sh", "/tmp/b.sh"))
    with pytest.raises(ProfileError, match="changed on disk after it was shown"):
        store.accept("shared", shown.digest)
    with pytest.raises(UntrustedProfileError):
        store.load_for_launch("shared")


@pytest.mark.parametrize("settings, field", [
    ('intra = "lots"', "intra"), ("intra = -3", "intra"), ("intra = 100000", "intra"),
    ("batch = 0", "batch"), ("timeout = -1.0", "timeout"), ('visible_gpus = ["x"]', "settings"),
])
def test_profiles_with_settings_out_of_range_are_broken_not_applied(tmp_path, settings, field):
    path = profiles_dir() / "odd.toml"
    path.parent.mkdir(parents=True)
    path.write_text(_foreign(tmp_path, settings).read_text())
    [entry] = ProfileStore(profiles_dir()).entries()
    assert entry.profile is None and field in entry.problem and str(path) in entry.problem
    used = tflaunch("run", "--profile", "odd", "--", sys.executable, "-c", "pass")
    assert used.returncode == 2 and "cannot use" in used.stderr


def test_saves_that_cannot_be_written_say_why_before_and_after_runs(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    refused = tflaunch("bench", "--model", "sample:mlp", "--save-profile", "x",
                       env={**os.environ, "TFLAUNCH_CONFIG_DIR": str(blocker / "config")})
    assert refused.returncode == 2 and "Profiles cannot be saved in" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr and "[1/" not in refused.stderr, "refused before any run"

    store = ProfileStore(profiles_dir())
    store.save(Profile("old", LaunchConfig(intra=1)))

    def full_disk(_fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(ProfileError, match="No space left on device"):
        store.save(Profile("old", LaunchConfig(intra=2)), overwrite=True)
    monkeypatch.undo()
    assert store.load("old").config.intra == 1, "the old file is intact"
    assert [p.name for p in store.folder.iterdir()] == ["old.toml"], "no temporary file left"


def test_the_app_applies_a_stranger_s_profile_only_after_its_user_accepts(qtbot, window, tmp_path):
    marker_free = tmp_path / "their-python"  # never run here: applying runs nothing
    window.profiles.import_file(_foreign(tmp_path, f'intra = 3\npython = "{sys.executable}"\n'
                                                   f'[settings.extra_env]\nLD_PRELOAD = "{marker_free}"'))
    view = window.profiles_view
    view.refresh()
    assert view.list.item(0).text() == "shared (runs code: not accepted)"
    view.select("shared")
    assert "LD_PRELOAD" in view.detail.toPlainText()
    window.use_config(LaunchConfig())

    def answer(button: str) -> None:
        box = QApplication.activeModalWidget()
        assert box is not None and "LD_PRELOAD" in box.informativeText()
        next(b for b in box.buttons() if b.text() == button).click()

    QTimer.singleShot(100, lambda: answer("Cancel"))
    view.apply_selected()
    assert window.panel.config().intra == 0, "refused: nothing applied"
    with pytest.raises(UntrustedProfileError):
        window.profiles.load_for_launch("shared")

    QTimer.singleShot(100, lambda: answer("Accept and apply"))
    view.apply_selected()
    assert window.panel.config().intra == 3
    assert window.profiles.load_for_launch("shared").config.extra_env["LD_PRELOAD"] == str(marker_free)
    assert view.list.item(0).text() == "shared"


def test_code_it_runs_is_empty_for_defaults():
    assert code_it_runs(LaunchConfig()) == []
