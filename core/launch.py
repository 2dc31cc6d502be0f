"""Starts a user's own command with a launch profile applied, without changing it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from . import probe
from .config import LaunchConfig

HOOK_DIR = Path(__file__).resolve().with_name("launch_hook")
CONFIG_ENV = "TFLAUNCH_TF_CONFIG"
_TF_CONFIG_KEYS = ("intra", "inter", "xla", "memory_growth", "memory_limit_mb")


def profile_environment(config: LaunchConfig, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command runs in under this profile."""
    env = dict(os.environ if base is None else base)
    env.update(probe.tensorflow_environment(config.probe_config()))
    env[CONFIG_ENV] = json.dumps({k: getattr(config, k) for k in _TF_CONFIG_KEYS})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HOOK_DIR), env.get("PYTHONPATH", "")]))
    return env


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: 128 + N when signal N ended it."""
    return 128 - returncode if returncode < 0 else returncode


def run_with_profile(config: LaunchConfig, command: Sequence[str]) -> int:
    """Run `command` in the foreground with the profile applied; its exit status."""
    try:
        child = subprocess.Popen(list(command), env=profile_environment(config))
    except FileNotFoundError:
        raise OSError(f"The command {command[0]} was not found.") from None
    # Ctrl+C reaches the child from the terminal; we wait for it to end its own way.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return exit_status(child.wait())
    finally:
        signal.signal(signal.SIGINT, previous)
