"""Values that reach a shell are data (issue 43, item 3): every cluster option is given
hostile values; each is refused with its option named, or written into job.sh (and sbatch's
argv) as one quoted word, which is parsed back here. Before the fix a --shared-dir with a
newline ran as a shell line in job.sh (or as an #SBATCH directive), --gres gpu:../../x:1
followed `..` into a file path, and --sbatch-arg=/path/x.sh replaced tflaunch's job script.

The table (option x value -> refused or written) is printed with -s; the real cluster runs
one sweep whose folder holds every shell character a path can (test_cluster_sweep.py style)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tflaunch.core.cli.main import main

from .cluster_tools import merge, settle, submit

HOSTILE = {
    "newline+directive": "x\n#SBATCH --wrap=touch PWNED",
    "substitution": "$(touch PWNED)",
    "backtick;": "`touch PWNED`;touch PWNED",
    "quote": "it's",
    "traversal": "../../x",
    "leading dash": "--wrap=touch PWNED",
    "escape": "x\x1b[2Jy",
    "C1 NEL": "x\x85y",
    "arabic digit": "\u0661",
}
# What each option's value is refused with: the option named, as the command line spells it.
OPTIONS = ("partition", "gres", "gpu-types", "shared-dir", "job-name", "container", "setup", "account", "qos",
           "time", "mem", "cpus-per-task", "trials-per-task", "trial-seconds", "max-parallel", "shared-group",
           "sbatch-arg", "signal-lead", "requeue")
# Accepted as they are, by design: a setup line is a shell line of the user's own.
CODE_BY_DESIGN = {"setup"}


@pytest.fixture
def recording_sbatch(tmp_path, monkeypatch) -> Path:
    """sbatch, squeue and scancel that answer a job id and log each argv (one JSON line)."""
    log = tmp_path / "sbatch.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sbatch", "squeue", "scancel"):
        path = bin_dir / name
        path.write_text(f"#!{__import__('sys').executable}\nimport json, sys\n"
                        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv) + '\\n')\nprint('4711')\n")
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def _sweep(tmp_path: Path, option: str, value: str, capsys) -> tuple[int, str, str]:
    shared = tmp_path / "shared"
    args = ["sweep", "--on", "slurm", "--model", "sample:mlp", "--vary", "intra=1,2", "--repeat", "1",
            "--warmup", "0", "--json"]
    if option == "shared-dir":
        shared = tmp_path / value.replace("/", "_")  # a folder's name; `..` stays text
        args += ["--shared-dir", str(shared)]
    else:
        args += ["--shared-dir", str(shared), f"--{option}={value}"]
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _parsed_back(folder: Path, log: Path) -> None:
    """job.sh is valid sh, holds no directive, and names the folder as one word; every sbatch
    ran one of tflaunch's scripts, the hostile value (if any) as one argument."""
    script = folder / "job.sh"
    assert subprocess.run(["sh", "-n", str(script)], capture_output=True).returncode == 0
    lines = script.read_text().splitlines()
    assert not [line for line in lines if line.lstrip().upper().startswith("#SBATCH")]
    command = next(line for line in lines if "tflaunch.core.cli.main trial" in line)
    words = shlex.split(command.replace("$trials &", ""))
    assert words[words.index("trial") + 1] == str(folder)
    for line in log.read_text().splitlines():
        argv = json.loads(line)
        if Path(argv[0]).name == "sbatch":
            scripts = [a for a in argv[1:] if not a.startswith("-")]
            assert scripts[0] in (str(script), *map(str, (folder / "check").glob("*.sh"))), argv


@pytest.mark.parametrize("option", OPTIONS)
def test_every_cluster_option_takes_hostile_values_as_data_or_refuses_them(tmp_path, capsys, recording_sbatch,
                                                                           option):
    table = []
    for kind, value in HOSTILE.items():
        code, out, err = _sweep(tmp_path, option, value, capsys)
        if code == 0:
            folder = Path(json.loads(out)["folder"])
            _parsed_back(folder, recording_sbatch)
            recording_sbatch.unlink(missing_ok=True)
            if option not in CODE_BY_DESIGN:
                assert not list(Path.cwd().glob("PWNED")) and not list(folder.rglob("PWNED"))
            table.append(f"{option:16} {kind:18} written as data")
        else:
            assert code == 2, err
            named = f"--{option}" if option != "gpu-types" else "--gpu-types"
            assert named in err or "invalid choice" in err or f"argument --{option}" in err, err
            assert "Traceback" not in err
            table.append(f"{option:16} {kind:18} refused: {err.strip().splitlines()[-1][:90]}")
        assert "\n#SBATCH" not in "".join(p.read_text() for p in tmp_path.rglob("job.sh"))
    print("\n" + "\n".join(table))


def test_a_shared_dir_with_a_newline_never_reaches_job_sh(tmp_path, capsys, recording_sbatch):
    """The defect as found: the rest of the path ran as a shell line on every task."""
    code, _out, err = _sweep(tmp_path, "shared-dir", "x\ntouch PWNED", capsys)
    assert code == 2 and "--shared-dir" in err and "line break" in err
    assert not list(tmp_path.rglob("job.sh")) and not recording_sbatch.exists()


def test_gres_with_a_path_and_an_sbatch_arg_that_is_a_script_are_refused(tmp_path, capsys, recording_sbatch):
    code, _out, err = _sweep(tmp_path, "gres", "gpu:../../x:1", capsys)
    assert code == 2 and "--gres: 'gpu:../../x:1' is not a generic resource" in err and "Traceback" not in err
    code, _out, err = _sweep(tmp_path, "sbatch-arg", "/tmp/x.sh", capsys)
    assert code == 2 and "--sbatch-arg: '/tmp/x.sh' is not an sbatch option" in err
    assert not recording_sbatch.exists(), "nothing submitted"


@pytest.mark.slow  # job.sh of every hostile value is parsed back in the fast tier; this runs one on the cluster
def test_a_folder_of_shell_characters_runs_on_the_real_cluster(cluster, tmp_path):
    """Quotes, `$( )`, `;`, `#SBATCH` and spaces in the shared folder's path: job.sh and the
    check job take it as one word, and the trials run and merge."""
    shared = tmp_path / "it's $(touch PWNED); #SBATCH --wrap=x"
    folder = submit("--model", "sample:mlp", "--python", str(_fake(tmp_path)), "--vary", "intra=1,2",
                    "--repeat", "1", "--warmup", "0", "--shared-dir", str(shared), cwd=tmp_path)
    assert set(settle(folder)["counts"]) == {"done"}
    assert len(merge(folder)) == 1 and not list(tmp_path.rglob("PWNED"))


def _fake(folder: Path) -> str:
    from ..builders import fake_python

    return fake_python(folder)


def test_a_failing_setup_line_fails_its_trials_with_the_line_and_its_words(cluster, tmp_path):
    """`module load cuda/12.4` said `module: not found` and the trial was merged as done (issue 43, item 6)."""
    folder = submit("--model", "sample:mlp", "--python", str(_fake(tmp_path)), "--vary", "intra=1,2",
                    "--repeat", "1", "--warmup", "0", "--setup", "echo preparing", "--setup", "module load cuda/12.4",
                    "--shared-dir", str(cluster.shared), cwd=tmp_path)
    states = settle(folder)
    assert set(states["counts"]) == {"failed"}, states["counts"]
    detail = states["trials"][0]["detail"]
    assert "its setup line 2 `module load cuda/12.4` failed with status 127" in detail, detail
    assert "not found" in detail and "sweep resubmit" in detail


def _array_argv(log: Path) -> list[str]:
    """The argv of the sbatch that submitted the trials' array (not the check job)."""
    argvs = [json.loads(line) for line in log.read_text().splitlines()]
    return next(a for a in argvs if Path(a[0]).name == "sbatch" and any(w.startswith("--array=") for w in a))


def test_the_early_warning_and_requeue_reach_sbatch_as_asked_and_a_lead_past_the_limit_is_refused(
        tmp_path, capsys, recording_sbatch):
    """Issue 43, item 7: sbatch --signal=B:USR1@S (B: the trial runs in the batch step, which
    a warning to the steps never reaches), --requeue where asked, and logs appended across a
    requeue. A lead not shorter than --time is refused naming both; --signal is tflaunch's."""
    assert _sweep(tmp_path, "time", "1", capsys)[0] == 0
    argv = _array_argv(recording_sbatch)
    assert "--signal=B:USR1@30" in argv and "--open-mode=append" in argv and "--requeue" not in argv, argv
    recording_sbatch.unlink()
    code = main(["sweep", "--on", "slurm", "--model", "sample:mlp", "--vary", "intra=1,2", "--repeat", "1",
                 "--shared-dir", str(tmp_path / "shared"), "--requeue", "--signal-lead", "0"])
    assert code == 0, capsys.readouterr().err
    argv = _array_argv(recording_sbatch)
    assert "--requeue" in argv and not [w for w in argv if w.startswith("--signal")], argv
    code = main(["sweep", "--on", "slurm", "--model", "sample:mlp", "--vary", "intra=1,2", "--shared-dir",
                 str(tmp_path / "shared"), "--time", "1", "--signal-lead", "60"])
    err = capsys.readouterr().err
    assert code == 2 and "--signal-lead: 60 s is not shorter than --time 1 (60 s)" in err, err
    code, _out, err = _sweep(tmp_path, "sbatch-arg", "--signal=USR1@60", capsys)
    assert code == 2 and "--sbatch-arg: --signal is tflaunch's to set: give --signal-lead" in err, err
