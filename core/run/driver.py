"""The command line's driver of ProbeSessions: subprocesses and one selectors loop.

Several sessions run in one loop (a sweep's instances start together), so no thread is
needed. The child leads its own process group and dies with us (the probe asks the
kernel for it), and cancel or timeout ends the whole group. The group is in our session,
never a session of its own: the kernel schedules a session as one group (its autogroup),
so a child in a new session would be scheduled apart from the terminal the user runs a
program from, with figures a terminal run does not get (seen under load: 3.8-10 s against
10-34 s to a first step). A background job of the terminal, it gives up the terminal at
its start (probe/terminal.py) rather than be stopped by it.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

from ..settings.config import LaunchConfig
from .gpus.nvml import GpuMemorySampler
from .launch_check import KnownFlags, ask_known_flags, launch_check
from .process_tree import end_group, end_leftovers
from .program import STOP_GRACE_S
from .record import RunRecord
from .sampling import ResourceSampler
from .session import SAMPLE_INTERVAL_S, ProbeSession, start_together
from .watcher import Output, Watcher

EXIT_DRAIN_S = 0.5  # after the child exits, how long its leftover descendants may hold the pipes


@dataclass
class _Child:
    session: ProbeSession
    proc: subprocess.Popen[bytes]
    sampler: ResourceSampler
    streams: dict[IO[bytes], Callable[[bytes], Output]] = field(default_factory=dict)
    next_sample: float = 0.0
    exited_at: float | None = None
    kill_at: float | None = None  # a program stopped at ready: SIGKILL then, if TERM was not enough
    events: IO[bytes] | None = None  # a program's event channel, closed with the others
    followed: int | None = None  # a warm-started program's pid, sampled with the client's tree
    cancel_heard: bool = False  # the session was cancelled (from any thread) and its group ended


def run_sessions(sessions: Sequence[ProbeSession], watcher: Watcher | None = None,
                 gpus: GpuMemorySampler | None = None) -> list[RunRecord]:
    """Start every session's child at once and drive them all to their end."""
    watcher = watcher or Watcher()
    if not any(s.shared for s in sessions):
        start_together([s for s in sessions if not s.done])
    selector = selectors.DefaultSelector()
    children: list[_Child] = []
    try:
        for session in sessions:
            child = _start(session, watcher, gpus)
            if child is not None:
                children.append(child)
                for stream in child.streams:
                    selector.register(stream, selectors.EVENT_READ, child)
        _loop(selector, children, watcher)
    except KeyboardInterrupt:
        for child in children:
            if child.session.cancel():
                end_group(child.proc.pid)
        for child in children:
            _finish(child, watcher)
    finally:
        selector.close()
    return [s.record for s in sessions]


def _start(session: ProbeSession, watcher: Watcher, gpus: GpuMemorySampler | None) -> _Child | None:
    if session.done:  # refused by the launch check
        watcher.ended(session.record)
        return None
    argv, env = session.launch(time.time(), time.monotonic())
    # A program's events come on a pipe of their own, inherited by number (pass_fds).
    events_r, events_w = os.pipe() if session.observes else (-1, -1)
    if session.observes:
        env.update(session.events_fd_env(events_w))
    watcher.started(session.record)
    try:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, process_group=0, cwd=session.cwd,
                                pass_fds=(events_w,) if session.observes else ())
    except OSError as exc:
        if session.observes:
            os.close(events_r)
        session.failed_to_start(f"Could not start {argv[0]}: {exc.strerror or exc}.")
        watcher.ended(session.record)
        return None
    finally:
        if session.observes:
            os.close(events_w)  # the child's now: its end closes the pipe
    session.started(proc.pid)
    assert proc.stdout is not None and proc.stderr is not None
    streams: dict[IO[bytes], Callable[[bytes], Output]] = {proc.stdout: session.stdout, proc.stderr: session.stderr}
    events = os.fdopen(events_r, "rb", buffering=0) if session.observes else None
    if events is not None:
        streams[events] = session.events
    return _Child(session, proc, ResourceSampler(proc.pid, gpus), streams, events=events)


def _loop(selector: selectors.BaseSelector, children: list[_Child], watcher: Watcher) -> None:
    live = list(children)
    while live:
        now = time.monotonic()
        wake = min(min(c.next_sample for c in live), now + SAMPLE_INTERVAL_S)
        for key, _ in selector.select(timeout=max(0.0, wake - now)) if selector.get_map() else []:
            child: _Child = key.data
            stream = key.fileobj
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(stream)
                child.streams.pop(stream)  # type: ignore[call-overload]
                continue
            output = child.streams[stream](chunk)  # type: ignore[index]
            if output.events or output.log:
                watcher.changed(child.session.record, output)
            warm_child = child.session.warm_child
            if warm_child is not None and warm_child != child.followed:
                child.followed = warm_child
                child.sampler.follow(warm_child)  # a warm-started program is the server's child
            if output.stop:
                _stop_at_ready(child)
        if not selector.get_map():
            time.sleep(max(0.0, wake - time.monotonic()))
        now = time.monotonic()
        for child in list(live):
            if now >= child.next_sample:
                child.next_sample = now + SAMPLE_INTERVAL_S
                sample = child.sampler.sample()
                if sample is not None:
                    child.session.sample(time.time(), *sample)
                    watcher.changed(child.session.record, None)
            # A session cancelled from another thread (a conversion given up) ends here, as a
            # timed-out one does.
            cancelled = child.session.cancelled and not child.cancel_heard
            child.cancel_heard = child.session.cancelled
            if cancelled or child.session.expired(now) or (child.kill_at is not None and now >= child.kill_at
                                                           and child.proc.poll() is None):
                end_group(child.proc.pid)
            if child.exited_at is None and child.proc.poll() is not None:
                child.exited_at = now
            # Pipes closed, or the child gone and its leftovers given time to let go.
            if (not child.streams and child.proc.poll() is not None) or \
                    (child.exited_at is not None and now - child.exited_at > EXIT_DRAIN_S):
                for stream in list(child.streams):
                    selector.unregister(stream)
                # Reaped already: its group, not its pid (which may be a stranger's by now).
                end_group(child.proc.pid, tree=False)  # a descendant still holding the pipes
                _finish(child, watcher)
                live.remove(child)


def _stop_at_ready(child: _Child) -> None:
    """A program reached its ready point: TERM to its group now, KILL after a grace."""
    child.session.stopping()
    try:
        os.killpg(child.proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    child.kill_at = time.monotonic() + STOP_GRACE_S


def _finish(child: _Child, watcher: Watcher) -> None:
    if child.session.done:
        return
    returncode = child.proc.wait()
    end_leftovers(child.session.marker)  # helpers that left the group and outlived the child
    for stream in (child.proc.stdout, child.proc.stderr, child.events):
        if stream is not None:
            stream.close()
    record, output = child.session.exited(returncode if returncode >= 0 else None,
                                          -returncode if returncode < 0 else None)
    if output.events or output.log:
        watcher.changed(record, output)
    watcher.ended(record)


def run_probe(config: LaunchConfig, watcher: Watcher | None = None, command: list[str] | None = None,
              known_flags: KnownFlags | None = ask_known_flags) -> RunRecord:
    """One measured run, checked, started and driven to its end (tests, simple callers)."""
    session = ProbeSession(config, command=command)
    problems = launch_check(config, known=known_flags)
    if problems:
        session.refuse(problems[0].field, problems[0].message)
    gpus = GpuMemorySampler()
    try:
        return run_sessions([session], watcher, gpus)[0]
    finally:
        gpus.close()
