"""Shared fixtures: sample models saved once per session by the real probe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Plain offscreen Qt has an 800×800 screen that clamps restored windows; give the tests a
# 1920×1080 one at 96 DPI, which also makes screenshots the same on every machine.
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    screen = Path(__file__).with_name("offscreen-screen.json")
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={screen}"

import pytest
from hypothesis import settings

# CI runs every property test on the same examples (derandomized): a failure there is
# reproducible, and each case that ever failed is pinned with @example as well.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

from tflaunch.core.settings.config import LaunchConfig

from .builders import save_sample


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> dict[str, dict[str, Path]]:
    """{sample: {format: path}} for the small samples; wide and cnn on demand below."""
    out = tmp_path_factory.mktemp("models")
    return {name: save_sample(name, out) for name in ("mlp", "multi")}


@pytest.fixture(scope="session")
def big_models(tmp_path_factory) -> dict[str, dict[str, Path]]:
    """Both large samples in every format: the slow tier's (about 10 s to build)."""
    out = tmp_path_factory.mktemp("big_models")
    return {name: save_sample(name, out) for name in ("wide", "cnn")}


@pytest.fixture(scope="session")
def wide_keras(tmp_path_factory) -> Path:
    """The wide sample as .keras (134 MB of weights: a load long enough to act during), the
    one large model the fast tier needs, built alone (a third of big_models' time)."""
    return save_sample("wide", tmp_path_factory.mktemp("wide"), ["keras"])["keras"]


@pytest.fixture
def quick_config() -> LaunchConfig:
    """The cheapest real run: the mlp sample with a few steady calls."""
    return LaunchConfig(model="sample:mlp", steady=3, timeout=120)


@pytest.fixture(scope="session")
def python_without_tensorflow(tmp_path_factory) -> str:
    env = tmp_path_factory.mktemp("env-without-tf")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    return str(env / "bin" / "python")


@pytest.fixture(autouse=True)
def private_user_dirs(tmp_path, monkeypatch):
    """Every test gets its own history and profiles folder, children included."""
    monkeypatch.setenv("TFLAUNCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TFLAUNCH_CONFIG_DIR", str(tmp_path / "config"))
