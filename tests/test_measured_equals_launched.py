"""Measured = launched: what Python reads at interpreter start (PYTHONPATH, and so a
sitecustomize there) takes effect alike under bench, sweep and `tflaunch run`, because the
child's whole environment is built before exec (the app's case is in tests/gui)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tflaunch.core.paths import profiles_dir
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileStore

from .builders import tflaunch

MARKER_SITE = "import os\nwith open(os.environ['TFLAUNCH_MARKER'], 'a') as f:\n    f.write(f'{os.getpid()}\\n')\n"


@pytest.fixture
def marker(tmp_path) -> tuple[dict[str, str], Path]:
    """Extra variables that make every child's interpreter note its start in a file."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(MARKER_SITE)
    path = tmp_path / "marker.txt"
    return {"PYTHONPATH": str(site), "TFLAUNCH_MARKER": str(path)}, path


def env_args(env: dict[str, str]) -> list[str]:
    return [arg for name, value in env.items() for arg in ("--env", f"{name}={value}")]


def starts(path: Path) -> int:
    return len(path.read_text().split()) if path.exists() else 0


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_bench_child_starts_with_the_variables(marker):
    env, path = marker
    done = tflaunch("bench", "--model", "sample:mlp", "--steady", "1", *env_args(env), "--json")
    assert done.returncode == 0, done.stderr
    assert starts(path) == 1


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_every_sweep_trial_starts_with_the_variables(marker):
    env, path = marker
    done = tflaunch("sweep", "--model", "sample:mlp", "--steady", "0", "--vary", "intra=1,2", "--repeat", "1",
                    "--warmup", "0", "--no-racing", *env_args(env))
    assert done.returncode == 0, done.stderr
    assert starts(path) == 3, "baseline, intra=1 and intra=2 each started once"


def test_a_script_run_with_a_profile_starts_with_the_variables(marker):
    env, path = marker
    ProfileStore(profiles_dir()).save(Profile("marked", LaunchConfig(extra_env=env), {"runs": 1}))
    done = tflaunch("run", "--profile", "marked", "--", sys.executable, "-c", "print('hello')")
    assert done.returncode == 0 and done.stdout.strip() == "hello", done.stderr
    assert starts(path) == 1
