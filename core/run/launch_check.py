"""The one check before anything is launched: bench, sweep, run, the app and Launch script.

Settings are validated (LaunchConfig.validate), and TF_XLA_FLAGS, when the child will
have it, is checked against the flags the installed TensorFlow knows: TensorFlow aborts
the whole process on an unknown entry.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from ..paths import data_dir
from ..safe_text import shown
from ..settings import caches
from ..settings.child import PROBE_MAIN
from ..settings.config import LaunchConfig, Problem
from .environment import launch_environment
from .gpus.gpu_notes import warnings_before_run
from .gpus.nvml import machine_gpus
from .interpreters.build_info import BuildInfo, build_info
from .observable import unobservable_problems
from .program import normal_subject, program_problems

KnownFlags = Callable[[str], "list[str] | None"]


def flags_cache(python: str) -> Path:
    """Where the flag names of `python`'s TensorFlow are kept between runs."""
    return data_dir() / "xla-flags" / (hashlib.sha1(python.encode()).hexdigest()[:16] + ".json")


def known_flags_command(python: str) -> list[str]:
    return [python, str(PROBE_MAIN), "--known-xla-flags", "--cache", str(flags_cache(python))]


def parse_known_flags(stdout: str) -> list[str] | None:
    try:
        flags = json.loads(stdout.strip().splitlines()[-1])["flags"]
    except (ValueError, IndexError, KeyError, TypeError):
        return None
    return [str(f) for f in flags] if isinstance(flags, list) else None


def ask_known_flags(python: str) -> list[str] | None:
    """The interpreter's TensorFlow, asked (seconds the first time, then cached)."""
    try:
        done = subprocess.run(known_flags_command(python), capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_known_flags(done.stdout)


def cached_known_flags(python: str) -> list[str] | None:
    """What was found for the interpreter before, without starting anything (the app's
    interpreter check refreshes it in the background)."""
    try:
        data = json.loads(flags_cache(python).read_text(encoding="utf-8"))
        flags = next(iter(data.values())) if isinstance(data, dict) and len(data) == 1 else None
    except (OSError, ValueError):
        return None
    if not isinstance(flags, list) or all(str(f).startswith("tf_") for f in flags):
        return None  # none, or found before XLA_FLAGS names were kept: asked again
    return [str(f) for f in flags]


def flags_to_check(config: LaunchConfig) -> list[str]:
    """The TF_XLA_FLAGS entries a child started with `config` gets (settings, extra
    variables and our own environment together)."""
    return launch_environment(config).get("TF_XLA_FLAGS", "").split()


def pack_flags_to_check(config: LaunchConfig) -> list[str]:
    """The XLA_FLAGS entries the cache pack adds (XLA's autotune cache, on a GPU)."""
    flags = launch_environment(config).get("XLA_FLAGS", "").split()
    return [f for f in flags if f.startswith((caches.AUTOTUNE_DIR_FLAG, caches.AUTOTUNE_MODE_FLAG))]


def xla_flag_problems(config: LaunchConfig, known: KnownFlags) -> list[Problem]:
    flags, pack_flags = flags_to_check(config), pack_flags_to_check(config)
    if not flags and not pack_flags:
        return []
    names = known(config.python)
    if names is None:
        return []  # no TensorFlow found there: the run itself says so, in its own words
    problems = []
    unknown = [f for f in flags if _name(f) not in names or not _name(f).startswith("tf_xla_")]
    if unknown:
        field = "extra_env" if "TF_XLA_FLAGS" in config.extra_env else "xla_auto" if config.xla_auto else "xla_cache"
        problems.append(Problem(field, f"TF_XLA_FLAGS has {', '.join(unknown)}, which the TensorFlow of "
                                       f"{config.python} does not know; TensorFlow would abort at start. Remove it "
                                       "or update TensorFlow."))
    if unknown_pack := [f for f in pack_flags if _name(f) not in names]:
        problems.append(Problem("xla_cache", f"The cache pack's XLA_FLAGS {', '.join(unknown_pack)} are not known "
                                             f"to the TensorFlow of {config.python}; XLA would abort at start. Turn "
                                             "the XLA cache off for it, or update TensorFlow."))
    return problems


def _name(flag: str) -> str:
    return flag.lstrip("-").split("=")[0]


def allocator_problem(config: LaunchConfig) -> Problem | None:
    """PYTHONMALLOC is read before any Python runs: a value the interpreter does not know
    (mimalloc before 3.13) stops it from starting at all. The interpreter itself is asked."""
    value = launch_environment(config).get("PYTHONMALLOC")
    if not value:
        return None
    refusal = _allocator_refusal(config.python, value)
    if refusal is None:
        return None
    field = "extra_env" if "PYTHONMALLOC" in config.extra_env else "python"
    return Problem(field, f"PYTHONMALLOC={value}: {config.python} does not start with it ({refusal}). Use a value "
                          "that interpreter knows (default, malloc, pymalloc, debug; mimalloc from Python 3.13) or "
                          "leave it out.")


@functools.lru_cache(maxsize=32)
def _allocator_refusal(python: str, value: str) -> str | None:
    """The interpreter's own words when it will not start with PYTHONMALLOC=value; None when
    it starts (or cannot be asked: the run then says what is wrong with it)."""
    try:
        done = subprocess.run([python, "-S", "-c", "pass"], env={"PYTHONMALLOC": value}, capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    said = next((line for line in lines if "error" in line.lower()), lines[-1] if lines else "")
    return shown(said or f"it exited with status {done.returncode}", 200)


def page_cache_problem(config: LaunchConfig) -> str | None:
    from .storage.eviction import check  # what a cold start touches: read only when a run is checked

    return check(config)


def launch_check(config: LaunchConfig, *, script: bool = False,
                 known: KnownFlags | None = ask_known_flags) -> list[Problem]:
    """Every reason `config` cannot be launched; a script brings its own model."""
    config = normal_subject(config)  # checked as it will run: an interpreter first is the setting
    problems = config.validate(check_model=not script)
    if config.is_program and not script:
        problems += program_problems(config) + unobservable_problems(config)
    if known is not None and not any(p.field == "python" for p in problems):
        problems += xla_flag_problems(config, known)
    if not any(p.field == "python" for p in problems) and (allocator := allocator_problem(config)):
        problems.append(allocator)
    if not script and (why := page_cache_problem(config)):
        problems.append(Problem("page_cache", why))
    return problems


def launch_warnings(config: LaunchConfig) -> list[str]:
    """What a user should know before this launch, though it can run: each visible GPU the
    interpreter's TensorFlow has no kernels for at all (it will run on the CPU).
    Asks the interpreter for its build (about 0.1 s) only on a machine with GPUs."""
    gpus = machine_gpus()
    if not gpus.available:
        return []
    build = _build_of(config.python)
    if not build.ok:
        return []  # the run itself says what is wrong with that interpreter
    return warnings_before_run(gpus, build.capabilities, build.is_cuda_build, config.visible_gpus)


@functools.lru_cache(maxsize=16)
def _build_of(python: str) -> BuildInfo:
    return build_info(python, timeout=30)
