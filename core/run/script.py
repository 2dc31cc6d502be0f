"""`tflaunch run --profile`: a user's own command in the foreground, with the settings applied.

Its environment is the one every child gets (run.environment.launch_environment, with the
launch hook for the tf.config settings); its stdio is the terminal's.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence

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
    try:
        child = subprocess.Popen(list(command), env=launch_environment(config, launch_hook=True))
    except FileNotFoundError:
        raise OSError(f"The command {command[0]} was not found.") from None
    # Ctrl+C reaches the child from the terminal; we wait for it to end its own way.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pack_counted(config):
            return exit_status(child.wait())
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def pack_counted(config: LaunchConfig) -> Iterator[None]:
    """The run inside counted in its cache pack and said in a line: its stderr is the
    terminal's, so its hits are the entries it read (their access times) and its misses the
    entries it added."""
    pack = pack_for(config)
    if pack is None or pack[1]:  # none, or read-only: nothing of ours may be written there
        yield
        return
    folder = pack[0]
    before = cache_pack.snapshot(folder)["entries"]
    seen = cache_pack.mark_unread(folder)
    yield  # a launch that never ran (a warm start refused before its fork) raises here: not counted
    added = max(cache_pack.snapshot(folder)["entries"] - before, 0)
    hits = cache_pack.read_since_marked(folder) if seen else 0
    cache_pack.record_run(folder, hits, added)
    print(f"tflaunch: cache pack {folder.name}: {hits if seen else 'unknown'} XLA program"
          f"{'s' if hits != 1 else ''} read from it, {added} compiled and added", file=sys.stderr)


def run_warm_with_profile(config: LaunchConfig, command: Sequence[str], idle_s: float) -> int:
    """Run `command` warm (forked from a server that has imported TensorFlow) with the
    profile applied; cold, saying why, when it cannot start warm."""
    from .warm.warm_start import WarmStartError, cold_line, plan, run, server_line

    for note in prepare_caches(config):
        print(f"tflaunch: {note}", file=sys.stderr)
    try:
        launch = plan(command, config.python, launch_environment(config, launch_hook=True))
        with pack_counted(config):
            return run(launch, idle_s=idle_s,
                       on_server_started=lambda answer: print(server_line(answer), file=sys.stderr, flush=True))
    except WarmStartError as exc:
        print(cold_line(exc), file=sys.stderr)
    return run_with_profile(config, command)
