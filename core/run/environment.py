"""The one way a launcher builds a child's environment: settings, caches and all.

settings.child.child_environment turns a LaunchConfig into variables; the warm cache
folders it names depend on this machine's stack (TensorFlow, driver, GPUs), which only the
run layer can ask about. Every launcher (probe sessions of bench, sweep and the app,
`tflaunch run`, the launch check) comes through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..settings import cache_pack, caches
from ..settings.child import child_environment, xla_flag_set
from ..settings.config import LaunchConfig
from .interpreters.stack import current_stack


def stack_for(config: LaunchConfig, base: Mapping[str, str] | None = None) -> caches.Stack | None:
    """The key of the cache pack `config` uses (None when it keeps none): this machine's stack
    and the child's XLA flag set."""
    if not caches.uses_stack(config.cuda_cache, config.xla_cache):
        return None
    return current_stack(config.python).with_flags(xla_flag_set(config, base))


def launch_environment(config: LaunchConfig, base: Mapping[str, str] | None = None, *,
                       launch_hook: bool = False) -> dict[str, str]:
    """The child's whole environment, computed without touching any file."""
    return child_environment(config, base, launch_hook=launch_hook, stack=stack_for(config, base))


def pack_for(config: LaunchConfig, base: Mapping[str, str] | None = None) -> tuple[Path, bool] | None:
    """The cache pack a child with `config` reads (its folder, and whether it is read-only);
    None without the XLA cache, or when the guard leaves the pack out (cache_pack.state)."""
    stack = stack_for(config, base) if config.xla_cache else None
    if stack is None:
        return None
    folder = caches.pack_folder(stack)
    condition = cache_pack.state(folder)
    return (folder, condition.read_only) if condition.usable else None


def prepare_caches(config: LaunchConfig, base: Mapping[str, str] | None = None) -> list[str]:
    """Right before exec: a cold cache emptied, a pack made and checked (a damaged entry
    removed, a full disk or a read-only pack read, not filled); the notes that say what was
    done and why."""
    return caches.prepare(config.cuda_cache, config.xla_cache, stack_for(config, base))
