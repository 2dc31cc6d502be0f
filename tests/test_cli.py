"""The `tflaunch` command line, run as a user would run it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tflaunch.core.phases import PHASES, label
from tflaunch.core.settings.child import PROBE_DIR

from .builders import tflaunch


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_bench_prints_a_phase_table_with_units():
    done = tflaunch("bench", "--model", "sample:mlp", "--steady", "3", "--intra", "1")
    assert done.returncode == 0, done.stderr
    for name in PHASES:
        assert label(name) in done.stdout
    assert "Time to ready:" in done.stdout and " MiB" in done.stdout
    assert "settings: intra=1 steady=3" in done.stdout
    assert "Import" in done.stderr  # live progress goes to stderr


@pytest.mark.slow  # repeats run as in test_bench_repeat_table; this guards their JSON summary's shape
def test_bench_json_with_repeats_has_median_and_range():
    done = tflaunch("bench", "--model", "sample:mlp", "--steady", "1", "--repeat", "2", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert len(result["runs"]) == 2 and result["summary"]["ok"] == 2
    load = result["summary"]["phases"]["load"]
    assert load["n"] == 2 and load["min"] <= load["median"] <= load["max"]
    assert result["runs"][0]["settings"]["intra_op_threads"] == 0


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_bench_repeat_table():
    done = tflaunch("bench", "--model", "sample:mlp", "--steady", "1", "--repeat", "2")
    assert done.returncode == 0, done.stderr
    assert "Min – max" in done.stdout and "Runs: 2 of 2 succeeded" in done.stdout


def test_bench_failure_is_one_line_and_nonzero(tmp_path):
    done = tflaunch("bench", "--model", str(tmp_path / "nothing.keras"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"tflaunch: --model: The model {tmp_path / 'nothing.keras'} does not exist. Check the path."
    ]


def test_bench_failure_inside_the_child_names_the_phase(python_without_tensorflow):
    done = tflaunch("bench", "--model", "sample:mlp", "--python", python_without_tensorflow)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("tflaunch: Failed in Import:") and "pip install tensorflow" in last


def test_bench_timeout_stops_the_child():
    done = tflaunch("bench", "--model", "sample:cnn", "--timeout", "1")
    assert done.returncode == 1
    assert "timeout" in done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("bad", [["--repeat", "0"], ["--env", "NOEQUALS"], ["--gpus", "a,b"]])
def test_bad_arguments_are_usage_errors(bad):
    done = tflaunch("bench", "--model", "sample:mlp", *bad)
    assert done.returncode == 2 and "error" in done.stderr


def test_sample_command_saves_formats(tmp_path):
    done = tflaunch("sample", "mlp", "--out", str(tmp_path), "--format", "h5")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "mlp.h5").is_file() and str(tmp_path / "mlp.h5") in done.stdout


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_probe_runs_where_tflaunch_is_not_importable(tmp_path):
    """The probe is standalone: a copy of its folder, run by path in isolated mode (no
    site-packages of tflaunch's, no PYTHONPATH), still measures."""
    probe = tmp_path / "probe"
    shutil.copytree(PROBE_DIR, probe, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-I", str(probe / "__main__.py"), '{"model": "sample:mlp", "steady": 1}'],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    kinds = [json.loads(line)["event"] for line in done.stdout.splitlines()]
    assert kinds[0] == "hello" and kinds[-1] == "result"
