"""What a child process gets from a LaunchConfig: its argv and its whole environment.

Built once, before exec, for every kind of child: the probe (bench, sweep, the app) and a
user's own program (`tflaunch run --profile`, Launch script in the app). The two differ
only in what delivers the tf.config settings: the probe applies them itself, a user's
program gets them from the launch hook (a sitecustomize put first on PYTHONPATH).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..probe.tf_setup import TF_CONFIG_KEYS
from . import caches
from .config import LaunchConfig
from .vocabulary import AUTO_JIT_FLAGS, MODULE_LOADING

PROBE_DIR = Path(__file__).resolve().parents[1] / "probe"
# The child runs the package's __main__.py by path, not the folder: with the folder as
# argv[0], `import tensorflow` took 0.2-0.8 s longer (measured, same venv, alternated),
# which a start-up measurement cannot afford.
PROBE_MAIN = PROBE_DIR / "__main__.py"
HOOK_DIR = Path(__file__).resolve().with_name("launch_hook")
HOOK_CONFIG_ENV = "TFLAUNCH_TF_CONFIG"


def tensorflow_variables(config: LaunchConfig, base: Mapping[str, str],
                         stack: caches.Stack | None = None) -> dict[str, str | None]:
    """The variables TensorFlow and CUDA read at start that the settings decide; None
    removes a variable the base environment has (allocator=bfc is "no TF_GPU_ALLOCATOR")."""
    env: dict[str, str | None] = {}
    if config.log_level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = str(config.log_level)
    if config.onednn is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = "1" if config.onednn else "0"
    if config.visible_gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in config.visible_gpus)
    if config.memory_growth:
        env["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"  # TensorFlow accepts exactly "true"
    if config.allocator is not None:
        env["TF_GPU_ALLOCATOR"] = None if config.allocator == "bfc" else config.allocator
    if config.cudnn_autotune is not None:
        env["TF_CUDNN_USE_AUTOTUNE"] = "1" if config.cudnn_autotune else "0"
    if config.module_loading is not None:
        env["CUDA_MODULE_LOADING"] = MODULE_LOADING[config.module_loading]
    cache_env = caches.variables(config.cuda_cache, config.xla_cache, stack)
    added = {name: cache_env.pop(name, "").split() for name in ("TF_XLA_FLAGS", "XLA_FLAGS")}
    vmodule = cache_env.pop("TF_CPP_VMODULE", None)
    env.update(cache_env)
    added["TF_XLA_FLAGS"] = [*(AUTO_JIT_FLAGS if config.xla_auto else ()), *added["TF_XLA_FLAGS"]]
    for name, flags in added.items():
        if flags:
            present = base.get(name, "").split()  # the user's own, from the shell or extra_env
            env[name] = " ".join([*present, *(f for f in flags if f not in present)])
    if vmodule:
        # The user's own modules kept; TensorFlow's hit and miss lines are how a run shows
        # what the pack gave it (run.pack_hits).
        present = [m for m in base.get("TF_CPP_VMODULE", "").split(",") if m]
        module = vmodule.split("=", 1)[0]
        env["TF_CPP_VMODULE"] = ",".join(present if any(m.split("=", 1)[0] == module for m in present)
                                         else [*present, vmodule])
    return env


def xla_flag_set(config: LaunchConfig, base: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The XLA flags a child gets besides the cache locations (TF_XLA_FLAGS, then XLA_FLAGS):
    a part of the cache pack's key, as XLA's own cache keys leave them out."""
    env = {**(os.environ if base is None else base), **config.extra_env}
    tf_flags = {*env.get("TF_XLA_FLAGS", "").split(), *(AUTO_JIT_FLAGS if config.xla_auto else ())}
    return (*sorted(tf_flags), *sorted(set(env.get("XLA_FLAGS", "").split())))


def child_environment(config: LaunchConfig, base: Mapping[str, str] | None = None, *,
                      launch_hook: bool = False, stack: caches.Stack | None = None) -> dict[str, str]:
    """The complete environment of a child run with `config`, on top of `base` (ours).

    `stack` names the warm cache folders (run.interpreters.stack.current_stack); it is needed only when
    the settings keep one (caches.uses_stack), and run.environment passes it."""
    env = dict(os.environ if base is None else base)
    env.update(config.extra_env)
    for name, value in tensorflow_variables(config, env, stack).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    if launch_hook:
        env[HOOK_CONFIG_ENV] = json.dumps({k: getattr(config, k) for k in TF_CONFIG_KEYS})
        # Once: a launch inside a launch (the doctor measuring `tflaunch run` under its own
        # observer) must not grow the path, which keys the warm server the user's launch finds.
        given = env.get("PYTHONPATH", "")
        rest = [p for p in (given.split(os.pathsep) if given else []) if p != str(HOOK_DIR)]
        env["PYTHONPATH"] = os.pathsep.join([str(HOOK_DIR), *rest])
    return env


def probe_config(config: LaunchConfig, launched_at: float | None = None, anatomy: bool = False) -> dict[str, Any]:
    """What the probe reads: how to measure, and the settings it applies or reads back;
    `anatomy`: profile the first call (an extra run's, never a measured one)."""
    cfg = {k: v for k, v in config.to_dict().items() if k not in ("python", "timeout")}
    if anatomy:
        cfg["anatomy"] = True
    cfg["launched_at"] = time.time() if launched_at is None else launched_at
    cfg["launcher_pid"] = os.getpid()  # the probe dies with it, even if it died during start-up
    return cfg


def probe_command(config: LaunchConfig, launched_at: float | None = None, anatomy: bool = False) -> list[str]:
    """argv of a measuring child: the probe package run by path."""
    return [config.python, str(PROBE_MAIN), json.dumps(probe_config(config, launched_at, anatomy))]


def convert_command(python: str, source: str, formats: list[str], out: Path) -> list[str]:
    """argv of the probe's conversion mode: `source` (a path or sample:NAME) into formats."""
    command = [python, str(PROBE_MAIN), "--convert", source]
    for fmt in formats:
        command += ["--format", fmt]
    return command + ["--out", str(out)]
