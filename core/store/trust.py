"""Trust in shared profiles: what a profile would run, and whether its user accepted that.

Profiles travel between people as data, but some settings run code: an environment
variable (any that is not on the allow-list of settings/tuning_env.py), an interpreter,
modules imported before load, a model built by calling a function, Keras safe mode off.
A profile with any of these is used only after its user has seen the list and accepted
it; the acceptance is the SHA-256 of the file's bytes, so any edit needs it again.
Profiles a user saves themselves are accepted as they are written.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import tomllib
from pathlib import Path

import tomli_w

from ..probe.model.model_files import is_builder
from ..probe.model.user_code import is_file
from ..probe.outside_files import read_capped, resolved, same_interpreter
from ..safe_text import shown
from ..settings.config import LaunchConfig
from ..settings.tuning_env import is_tuning, why_it_needs_a_yes
from . import shallow_toml
from .atomic import atomic_write
from .model_code import model_code

# Settings that are data whatever their value: numbers, switches and choices tflaunch
# checks, names of inputs, and folders tflaunch itself owns (the caches). Every other
# setting runs code or chooses what runs, and is judged in code_it_runs; a new setting is
# neither until it is put in one of the two (tests/faults/test_profile_trust.py checks).
DATA_SETTINGS = frozenset({
    "intra", "inter", "jit_compile", "xla_auto", "onednn", "log_level", "visible_gpus", "memory_growth",
    "memory_limit_mb", "allocator", "cudnn_autotune", "module_loading", "grappler", "cuda_cache", "xla_cache", "nvtx",
    "page_cache", "batch", "inputs", "signature", "steady", "call", "until", "timeout",
})
JUDGED_SETTINGS = frozenset({"model", "python", "imports", "unsafe_deserialization", "extra_env", "program",
                             "workdir"})


def code_it_runs(config: LaunchConfig) -> list[str]:
    """Everything these settings would run besides the user's own command, as lines a
    person can judge; empty for settings that are plain data. Every value from the file is
    shown() (escapes visible, long values cut): these lines are read before a yes."""
    lines = []
    for name, value in sorted(config.extra_env.items()):
        if not is_tuning(name, value):
            lines.append(f"sets {shown(name, 80)}={shown(value)} ({why_it_needs_a_yes(name, value)})")
    # The same file in the same folder, not the same text: LINK/../../python names tflaunch's
    # python as text while the kernel follows LINK to a stranger's file.
    if not same_interpreter(config.python, sys.executable):
        lines.append(f"runs the interpreter {shown(config.python)}" + _resolved_as(config.python))
    lines += [f"imports {shown(target)} before loading the model (its code runs)"
              + (_resolved_as(target) if is_file(target) else "") for target in config.imports]
    if is_builder(config.model):
        builder = config.model.rpartition(":")[0]
        lines.append(f"builds the model by calling {shown(config.model)}" + _resolved_as(builder))
    elif not config.is_program:
        model = model_code(config.model)
        if model:
            lines.append(model)
    if config.unsafe_deserialization:
        lines.append("loads the model with Keras safe mode off (Lambda layers run code from the file)")
    if config.program:
        lines.append(f"runs the command {shown(' '.join(config.program))}")
    if config.workdir:
        lines.append(f"starts the program in {shown(config.workdir)} (python -m and relative paths read code from "
                     "there)" + _resolved_as(config.workdir))
    return lines


def _resolved_as(path: str) -> str:
    """", which is /real/path" when links or `..` make the path reach another place than its text says."""
    try:
        real = resolved(path)
    except (OSError, ValueError):
        return ""
    return "" if real == os.path.abspath(os.path.expanduser(path)) else f", which is {shown(real)}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class TrustFile:
    """The accepted profiles: file path -> SHA-256 of the bytes that were accepted.

    A file that cannot be read counts as empty: nothing is trusted by mistake.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def _entries(self) -> dict[str, dict[str, str]]:
        try:  # a regular file, capped: a FIFO or /dev/zero put here must not stall every listing
            data = shallow_toml.loads(read_capped(str(self.path), 16 << 20, "The trust file").decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, shallow_toml.TooDeepError):
            return {}
        entries = data.get("accepted")
        if not isinstance(entries, dict):
            return {}
        return {k: v for k, v in entries.items() if isinstance(v, dict) and isinstance(v.get("sha256"), str)}

    def accepted(self, profile_path: Path) -> str | None:
        """The digest accepted for this file, or None."""
        entry = self._entries().get(_key(profile_path))
        return entry["sha256"] if entry else None

    def accept(self, profile_path: Path, sha256: str) -> None:
        entries = self._entries()
        entries[_key(profile_path)] = {"sha256": sha256, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._write(entries)

    def forget(self, profile_path: Path) -> None:
        entries = self._entries()
        if entries.pop(_key(profile_path), None) is not None:
            self._write(entries)

    def _write(self, entries: dict[str, dict[str, str]]) -> None:
        # 0600: whoever can write this file decides what runs under this user's name.
        atomic_write(self.path, tomli_w.dumps({"version": 1, "accepted": entries}).encode("utf-8"), mode=0o600)


def _key(path: Path) -> str:
    # Resolved: the same file reached through a linked config folder is one acceptance.
    return resolved(str(path))
