"""Trust holes found from outside (issue 33): paths judged as text, escapes that rewrite what
a user reads before saying yes, and patterns that take more than they say.

Each case failed before its fix; a marker file stands for "code ran".
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tflaunch.core.paths import profiles_dir
from tflaunch.core.probe.outside_files import same_file, same_interpreter
from tflaunch.core.safe_text import shown
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.settings.tuning_env import is_tuning
from tflaunch.core.store.profiles import ProfileError, ProfileStore
from tflaunch.core.store.trust import code_it_runs
from tflaunch.gui.profiles.trust_dialog import TrustDialog

from ..builders import tflaunch
from .test_profile_trust import _foreign


def _interpreter_behind_a_link(tmp_path: Path, marker: Path) -> str:
    """`tmp/LINK/../../…/<tflaunch's python>`: as text, tflaunch's own interpreter; to the
    kernel, which follows LINK before `..`, a script of the attacker's that leaves `marker`."""
    ups = len(tmp_path.parts)  # enough `..` for the text to fold back to /
    deep = tmp_path / "evil" / Path(*[f"d{i}" for i in range(ups)])
    deep.mkdir(parents=True)
    (tmp_path / "LINK").symlink_to(deep)
    fake = tmp_path / "evil" / Path(sys.executable).relative_to("/")
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    text = str(tmp_path / "LINK") + "/.." * ups + sys.executable
    assert os.path.abspath(text) == sys.executable, "as text it is tflaunch's own python"
    assert same_file(text, str(fake)), "to the kernel it is the attacker's file"
    return text


def test_an_interpreter_that_is_tflaunch_s_only_as_text_needs_a_yes(tmp_path):
    marker = tmp_path / "ran"
    python = _interpreter_behind_a_link(tmp_path, marker)
    assert f"runs the interpreter {python}, which is {tmp_path}/evil" in "\n".join(
        code_it_runs(LaunchConfig(python=python)))
    tflaunch("profiles", "import", str(_foreign(tmp_path, f'python = "{python}"')))
    bench = tflaunch("bench", "--profile", "shared", "--json")
    assert bench.returncode == 2 and not marker.exists()
    assert json.loads(bench.stdout)["failure"]["kind"] == "untrusted_profile"


def test_tflaunch_s_own_interpreter_by_another_spelling_needs_nothing(tmp_path):
    (tmp_path / "bin").symlink_to(Path(sys.executable).parent)
    for spelling in (sys.executable, str(tmp_path / "bin" / Path(sys.executable).name),
                     str(Path(sys.executable).parent / ".." / "bin" / Path(sys.executable).name)):
        assert code_it_runs(LaunchConfig(python=spelling)) == [], spelling


def test_a_venv_beside_is_another_interpreter_though_it_is_the_same_file(tmp_path):
    """Every venv's python links to one base interpreter: same inode, other site-packages."""
    other = tmp_path / "venv" / "bin"
    other.mkdir(parents=True)
    (other / "python").symlink_to(os.path.realpath(sys.executable))
    assert same_file(str(other / "python"), sys.executable)
    if Path(sys.executable).parent.resolve() != other.resolve():
        assert not same_interpreter(str(other / "python"), sys.executable)


ESCAPE = "\x1b[1A\r\x1b[2K  - sets KMP_WARNINGS=0"


def test_escapes_in_a_profile_cannot_erase_what_trust_shows(tmp_path):
    source = _foreign(tmp_path, f'[settings.extra_env]\nLD_PRELOAD = "/tmp/evil.so"\n'
                                f'KMP_WARNINGS = {json.dumps(ESCAPE)}\nOMP_PLACES = "{"x" * 5000}"')
    tflaunch("profiles", "import", str(source))
    shown_out = tflaunch("profiles", "trust", "shared", stdin=open(os.devnull))  # noqa: SIM115
    assert "sets LD_PRELOAD=/tmp/evil.so" in shown_out.stdout
    assert "\x1b" not in shown_out.stdout and "\r" not in shown_out.stdout
    assert "\\x1b[1A\\x0d\\x1b[2K" in shown_out.stdout, "the escape is shown as what it is"
    assert "(5000 characters in all)" in shown_out.stdout and "x" * 400 not in shown_out.stdout
    refused = tflaunch("run", "--profile", "shared", "--", sys.executable, "-c", "pass")
    assert refused.returncode == 2 and "\x1b" not in refused.stderr and "LD_PRELOAD" in refused.stderr


def test_the_app_s_trust_dialog_shows_escapes_and_markup_as_text(qtbot):
    code = code_it_runs(LaunchConfig(extra_env={"LD_PRELOAD": "/tmp/evil.so", "X": ESCAPE,
                                                "Y": "<b>bold</b><!--", "Z": "\u202etxt.exe"}))
    dialog = TrustDialog("shared", code, 'KMP = "\x1b[2K"\n', None)
    qtbot.addWidget(dialog)
    assert dialog.textFormat() == Qt.TextFormat.PlainText, "a value's markup must not hide the lines after it"
    text = dialog.informativeText()
    assert "LD_PRELOAD=/tmp/evil.so" in text and "\x1b" not in text and "\\x1b[2K" in text
    assert "<b>bold</b><!--" in text and "\\u202e" in text
    assert "\x1b" not in dialog.detailedText() and "\\x1b[2K" in dialog.detailedText()


def test_shown_keeps_plain_text_and_says_how_long_a_cut_value_was():
    assert shown("KMP_AFFINITY=granularity=fine") == "KMP_AFFINITY=granularity=fine"
    assert shown("é ü 中文") == "é ü 中文"
    assert shown("a\u200bb\u2028c\x7f\x85") == "a\\u200bb\\u2028c\\x7f\\x85"
    assert shown("y" * 1000, 10) == "y" * 10 + "… (1000 characters in all)"


@pytest.mark.parametrize("name, value", [
    ("OMP_NUM_THREADS", "\u0663"), ("TF_NUM_INTRAOP_THREADS", "\u0661\u0662"), ("MALLOC_ARENA_MAX", "\uff11"),
    ("TF_NUM_INTRAOP_THREADS", "999999"), ("OMP_NUM_THREADS", "4,99999"), ("PYTHONHASHSEED", "4294967296"),
    ("TF_CPP_VMODULE", "x=\u0663"), ("KMP_BLOCKTIME", "\u0663"), ("CUDA_DEVICE_MAX_CONNECTIONS", "33"),
])
def test_tuning_values_are_ascii_and_in_range(name, value):
    assert not is_tuning(name, value)


@pytest.mark.parametrize("name, value", [("OMP_NUM_THREADS", "4,2"), ("PYTHONHASHSEED", "4294967295"),
                                         ("TF_NUM_INTRAOP_THREADS", "1024"), ("KMP_BLOCKTIME", "0")])
def test_tuning_values_in_range_stay_data(name, value):
    assert is_tuning(name, value)


def test_names_end_at_the_end_not_before_a_newline(tmp_path):
    problems = LaunchConfig(extra_env={"OMP_NUM_THREADS\n": "2"}).validate(check_model=False)
    assert any(p.field == "extra_env" for p in problems)
    with pytest.raises(ProfileError, match="cannot name a profile"):
        ProfileStore(profiles_dir()).path("fast\n")


def test_imports_builders_and_folders_say_where_links_lead(tmp_path):
    real = tmp_path / "theirs" / "deep"
    real.mkdir(parents=True)
    (real.parent / "layers.py").write_text("")
    (tmp_path / "LINK").symlink_to(real)
    spelled = f"{tmp_path}/LINK/../layers.py"  # as text: tmp/layers.py; to the kernel: tmp/theirs/layers.py
    lines = "\n".join(code_it_runs(LaunchConfig(imports=(spelled,), model=f"{spelled}:build")))
    assert f"imports {spelled} before loading the model (its code runs), which is {real.parent}/layers.py" in lines
    assert f"builds the model by calling {spelled}:build, which is {real.parent}/layers.py" in lines
    assert "which is" not in "\n".join(code_it_runs(LaunchConfig(imports=(str(real.parent / "layers.py"),))))
