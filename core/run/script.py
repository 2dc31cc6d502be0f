"""`tflaunch run --profile`: a user's own command in the foreground, with the settings applied.

Its environment is the one every child gets (run.environment.launch_environment, with the
launch hook for the tf.config settings); its stdio is the terminal's.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence

from ..settings import cache_pack
from ..settings.config import LaunchConfig
from .environment import launch_environment, pack_for, prepare_caches


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: 128 + N when signal N ended it."""
    return 128 - returncode if returncode < 0 else returncode


def run_with_profile(config: LaunchConfig, command: Sequence[str]) -> int:
    """Run `command` in the foreground with the profile applied; its exit status."""
    for note in prepare_caches(config):
        print(f"tflaunch: {note}", file=sys.stderr)
    pack = pack_for(config)
    before = cache_pack.snapshot(pack[0]) if pack else {}
    seen = pack is not None and not pack[1] and cache_pack.mark_unread(pack[0])
    try:
        child = subprocess.Popen(list(command), env=launch_environment(config, launch_hook=True))
    except FileNotFoundError:
        raise OSError(f"The command {command[0]} was not found.") from None
    # Ctrl+C reaches the child from the terminal; we wait for it to end its own way.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return exit_status(child.wait())
    finally:
        signal.signal(signal.SIGINT, previous)
        if pack and not pack[1]:  # its stderr is the terminal's: hits by read times, misses by entries added
            added = cache_pack.snapshot(pack[0])["entries"] - before["entries"]
            cache_pack.record_run(pack[0], cache_pack.read_since_marked(pack[0]) if seen else 0, max(added, 0))


def run_warm_with_profile(config: LaunchConfig, command: Sequence[str], idle_s: float) -> int:
    """Run `command` warm (forked from a server that has imported TensorFlow) with the
    profile applied; cold, saying why, when it cannot start warm."""
    from .warm.warm_start import WarmStartError, cold_line, plan, run, server_line

    for note in prepare_caches(config):
        print(f"tflaunch: {note}", file=sys.stderr)
    try:
        launch = plan(command, config.python, launch_environment(config, launch_hook=True))
        return run(launch, idle_s=idle_s,
                   on_server_started=lambda answer: print(server_line(answer), file=sys.stderr, flush=True))
    except WarmStartError as exc:
        print(cold_line(exc), file=sys.stderr)
    return run_with_profile(config, command)
