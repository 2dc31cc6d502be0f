"""`tflaunch run --profile`: a user's own command in the foreground, with the settings applied.

Its environment is the one every child gets (run.environment.launch_environment, with the
launch hook for the tf.config settings); its stdio is the terminal's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence

from ..settings import cache_pack
from ..settings.config import LaunchConfig
from .environment import launch_environment, pack_for, prepare_caches
from .process_tree import RUN_MARKER_ENV, carrying_marker, end_leftovers, run_marker
from .program import STOP_GRACE_S

# Signals that end a command run from a shell: sent to tflaunch alone, they end the script.
ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SI_KERNEL = 0x80  # siginfo's si_code of a signal the kernel sent (the terminal's Ctrl+C, a hang-up)


def exit_status(returncode: int) -> int:
    """A child's status as a shell reports it: 128 + N when signal N ended it."""
    return 128 - returncode if returncode < 0 else returncode


def run_with_profile(config: LaunchConfig, command: Sequence[str]) -> int:
    """Run `command` in the foreground with the profile applied; its exit status.

    The script is in tflaunch's process group, as any command a shell starts: Ctrl+C and
    Ctrl+Z from the terminal reach it directly. A signal sent to tflaunch alone (SIGTERM,
    SIGINT or SIGHUP from `kill`, a job manager, a closed ssh session) is the script's too:
    it is passed to the script and to everything it started (found by the run's marker),
    and what has not ended STOP_GRACE_S later is killed, so nothing is left orphaned."""
    for note in prepare_caches(config):
        print(f"tflaunch: {note}", file=sys.stderr)
    env = launch_environment(config, launch_hook=True)
    env[RUN_MARKER_ENV] = marker = run_marker()
    # Blocked, then taken with sigtimedwait: the sender's kind (the terminal or kill) is
    # known only that way, and no signal can land between the start and the wait.
    watched = {*(s for s in ENDING if signal.getsignal(s) != signal.SIG_IGN), signal.SIGCHLD}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    try:
        try:
            child = subprocess.Popen(list(command), env=env,
                                     preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, before))
        except FileNotFoundError:
            raise OSError(f"The command {command[0]} was not found.") from None
        with pack_counted(config):
            return _wait(child, marker, watched)
    finally:
        while signal.sigtimedwait(watched, 0) is not None:  # taken, so none ends tflaunch when unblocked
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _wait(child: subprocess.Popen[bytes], marker: str, watched: set[signal.Signals]) -> int:
    while True:
        info = signal.sigtimedwait(watched, 5.0)
        code = child.poll()
        if code is not None:
            return exit_status(code)
        if info is None or info.si_signo == signal.SIGCHLD:
            continue
        if info.si_code == SI_KERNEL:  # the terminal's: its whole foreground group, the script too, had it
            continue
        return _end(child, marker, signal.Signals(info.si_signo))


def _end(child: subprocess.Popen[bytes], marker: str, received: signal.Signals) -> int:
    """tflaunch was sent `received`: the script and what it started get it, then SIGKILL."""
    print(f"tflaunch: {received.name} received; passed to the script (pid {child.pid}) and the processes it "
          "started", file=sys.stderr, flush=True)
    for pid in {child.pid, *carrying_marker(marker)}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, received)
    try:
        code = child.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        code = child.wait()
        print(f"tflaunch: the script had not ended {STOP_GRACE_S:g} s after {received.name}; it was killed",
              file=sys.stderr, flush=True)
    if end_leftovers(marker):
        print("tflaunch: processes the script started outlived it and were killed", file=sys.stderr, flush=True)
    # The script's own status when it ended its own way (a handler that saved and exited);
    # 128 + N when the signal ended it, as a shell says of a command ended by signal N.
    return exit_status(code) if code >= 0 else 128 + received


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
