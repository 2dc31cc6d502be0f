"""Issue 43, item 9: text from outside is shown with its escapes visible (profiles show,
history show's stored stderr tail), numbers on the command line are ASCII digits, Ctrl+C
while tflaunch starts ends with its own line, exit codes say whether anything was done,
PYTHONMALLOC is what the interpreter accepts, and --json refusals answer in JSON."""

from __future__ import annotations

import builtins
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tflaunch.core.cli.history import show_text
from tflaunch.core.cli.main import main
from tflaunch.core.paths import history_path, profiles_dir
from tflaunch.core.run.launch_check import launch_check
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import Profile, ProfileStore

from .builders import TFLAUNCH, finished_record

HOSTILE = "a\u202eb\x85c\x1b[2Kd"  # a bidi override, a C1 control (NEL) and an erase-line escape
SEEN = "a\\u202eb\\x85c\\x1b[2Kd"


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if c in "\u202e\x85\x1b"]


def test_profiles_show_prints_c1_controls_and_bidi_overrides_as_escapes(capsys):
    ProfileStore(profiles_dir()).save(Profile("p", LaunchConfig(extra_env={"OMP_PROC_BIND": HOSTILE}), {"runs": 1}))
    assert main(["profiles", "show", "p"]) == 0
    out = capsys.readouterr().out
    assert not _raw_controls(out) and "a\\u202eb\\x85c" in out, out


def test_history_show_prints_a_stored_stderr_tail_as_escapes():
    record = finished_record()
    record.add_stderr(f"the child said {HOSTILE}")
    text = show_text(record, 1)
    assert not _raw_controls(text) and f"the child said {SEEN}" in text


@pytest.mark.parametrize("args", [["--intra", "\u0661\u0662"], ["--repeat", "\uff12"], ["--timeout", "\u0663"]])
def test_numbers_on_the_command_line_are_ascii_digits(capsys, args):
    """int() and float() read '١٢' as 12: it was taken as --intra 12."""
    assert main(["bench", "--model", "sample:mlp", *args]) == 2
    err = capsys.readouterr().err
    assert f"argument {args[0]}" in err and ("digits 0-9" in err or "seconds" in err), err


@pytest.mark.parametrize("args", [
    ["check", "--alpha", "٠.٠١"], ["check", "--factor", "inf"], ["check", "--min-difference", "nan"],
    ["check", "--warmup", "١"], ["check", "--baseline-runs", "١,2"], ["cache", "prune", "--older-than", "٣"],
])
def test_the_newer_commands_numbers_are_ascii_digits_too(capsys, args):
    """`tflaunch check` and `tflaunch cache` read their numbers with float() and int() (written
    beside numbers.py, not through it): '٠.٠١' and an infinite factor were taken."""
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"argument {args[1] if args[0] == 'check' else args[2]}" in err, err


def test_ctrl_c_while_tflaunch_starts_ends_with_its_own_line(tmp_path):
    """A Ctrl+C that lands while the commands' modules load (here, deterministically: a module
    they import raises it, as the signal would there) printed a 40-line traceback."""
    (tmp_path / "tomli_w.py").write_text("raise KeyboardInterrupt\n")
    done = subprocess.run([*TFLAUNCH[:1], "-m", "tflaunch.core.cli.main", "profiles", "list"],
                          capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(tmp_path),
                                                                            "PATH": "/usr/bin:/bin"})
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "tflaunch: interrupted (Ctrl+C); nothing further was started."


def test_history_delete_that_deleted_nothing_exits_non_zero(capsys, monkeypatch):
    """The run went (another tflaunch deleted it) while the question was asked: "Deleted 1 run", 0."""
    history = History(history_path())
    run_id = history.record(finished_record(), "cli")
    history.close()

    def other_process_deletes_first(_question: str) -> str:
        other = History(history_path())
        other.delete([run_id])
        other.close()
        return "y"

    monkeypatch.setattr(sys, "stdin", type("Terminal", (io.StringIO,), {"isatty": lambda self: True})())
    monkeypatch.setattr(builtins, "input", other_process_deletes_first)
    assert main(["history", "delete", str(run_id)]) == 1
    assert "Nothing deleted" in capsys.readouterr().out


def test_pythonmalloc_is_checked_against_the_interpreter():
    """mimalloc is on the allow-list (it is data) but stops Python 3.11 from starting."""
    python = str(Path.home() / ".pyenv/versions/3.11.7/bin/python")
    if not Path(python).exists():
        python = sys.executable if sys.version_info < (3, 13) else ""
    if not python:
        pytest.skip("no interpreter before 3.13 here")
    refused = launch_check(LaunchConfig(python=python, extra_env={"PYTHONMALLOC": "mimalloc"}), known=None)
    assert [p.field for p in refused] == ["extra_env"]
    assert f"PYTHONMALLOC=mimalloc: {python} does not start with it" in refused[0].message
    assert "unknown allocator" in refused[0].message
    assert launch_check(LaunchConfig(python=python, extra_env={"PYTHONMALLOC": "malloc"}), known=None) == []


def test_a_refusal_with_json_abbreviated_still_answers_in_json(capsys):
    """argparse takes --js for --json; the refusal printed nothing on stdout."""
    assert main(["sweep", "--model", "sample:mlp", "--vary", "intra=1,2", "--js", "--repeat", "x"]) == 2
    answer = json.loads(capsys.readouterr().out)
    assert answer["failure"]["kind"] == "invalid_arguments" and "--repeat" in answer["failure"]["message"]
