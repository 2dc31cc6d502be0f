"""The one way a launcher builds a child's environment: settings, caches and all.

settings.child.child_environment turns a LaunchConfig into variables; the warm cache
folders it names depend on this machine's stack (TensorFlow, driver, GPUs), which only the
run layer can ask about. Every launcher (probe sessions of bench, sweep and the app,
`tflaunch run`, the launch check) comes through here.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..settings import caches
from ..settings.child import child_environment
from ..settings.config import LaunchConfig
from .interpreters.stack import current_stack


def stack_for(config: LaunchConfig) -> caches.Stack | None:
    return current_stack(config.python) if caches.uses_stack(config.cuda_cache, config.xla_cache) else None


def launch_environment(config: LaunchConfig, base: Mapping[str, str] | None = None, *,
                       launch_hook: bool = False) -> dict[str, str]:
    """The child's whole environment, computed without touching any file."""
    return child_environment(config, base, launch_hook=launch_hook, stack=stack_for(config))


def prepare_caches(config: LaunchConfig) -> list[str]:
    """Right before exec: a cold cache emptied, a warm one stamped, stale ones removed;
    the notes to show about what was removed and why."""
    return caches.prepare(config.cuda_cache, config.xla_cache, stack_for(config))
