"""ProbeProcess: the app's driver of a ProbeSession, a child process, a sampling thread and a clock.

Only I/O lives here: the child's bytes go to core's ProbeSession, which parses and folds
them into the RunRecord exactly as the command line's driver does; the clock, the memory
samples and the exit are reported to the same session, all on the GUI thread. The child is
started as the command line's is (subprocess, a process group of its own in the app's
session: QProcess can only make a new session, which the kernel schedules as a group of its
own, apart from the app; core/run/driver.py says why that matters); a pidfd says when it
ended. Its stdout and stderr are pipes of ours, read at the pipe's speed (PipeReader).
Memory is read on a thread of its own (SamplerThread) and collected on the clock's tick.
Nothing blocks: it reacts to the pidfd's and the pipes' notifiers and to timers. Watchers (the
recorder that stores the run) hear what the CLI's hear.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, QTimer, Signal

from tflaunch.core.run.driver import EXIT_DRAIN_S
from tflaunch.core.run.gpus.nvml import GpuMemorySampler
from tflaunch.core.run.process_tree import end_group, end_leftovers
from tflaunch.core.run.program import STOP_GRACE_S
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.sampling import ResourceSampler
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.run.watcher import Output, Watcher

from .pipe_reader import PipeReader
from .sampler_thread import SamplerThread

# The GUI's clock: the deadline is checked and the sampler's batch collected 20 times a second.
TICK_MS = 50


class ProbeProcess(QObject):
    """Runs one ProbeSession; emits the record as it grows and when it is done."""

    event_applied = Signal(object)  # RunRecord
    sampled = Signal(list)  # [(seconds since launch, RSS bytes, {gpu: bytes})], oldest first
    log_lines = Signal(list)  # the child's stderr; for a script, its stdout too
    finished = Signal(object)  # RunRecord

    def __init__(self, session: ProbeSession, parent: QObject | None = None,
                 gpu_sampler: GpuMemorySampler | None = None, watcher: Watcher | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.record: RunRecord = session.record
        self._watcher = watcher or Watcher()
        self._gpu = gpu_sampler
        self._sampling: SamplerThread | None = None
        self._followed: int | None = None
        self._pid = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._ended: QSocketNotifier | None = None  # on the child's pidfd: readable once it has ended
        self._clock = QTimer(self)
        self._clock.setInterval(TICK_MS)
        self._clock.timeout.connect(self._on_tick)
        # stdout, stderr and a program's event channel, each read as the child writes it.
        self._readers: list[PipeReader] = []

    @property
    def running(self) -> bool:
        return not self.session.done and self._alive

    @property
    def _alive(self) -> bool:
        """Started and not yet reaped: until we reap it, its pid (and group) is still the child's."""
        return self._process is not None and self._process.returncode is None

    def start(self) -> None:
        if self.session.done:  # refused by the launch check
            self._watcher.ended(self.record)
            self.finished.emit(self.record)
            return
        argv, env = self.session.launch(time.time(), time.monotonic())
        write_ends = [self._pipe(self.session.stdout), self._pipe(self.session.stderr)]
        if self.session.observes:
            write_ends.append(self._pipe(self.session.events))
            env.update(self.session.events_fd_env(write_ends[-1]))
        self._watcher.started(self.record)
        self._clock.start()
        try:
            # As the command line's driver: its own process group in our session (setpgid
            # before exec; no Python runs in the child), stdin /dev/null.
            self._process = subprocess.Popen(argv, env=env, cwd=self.session.cwd, stdin=subprocess.DEVNULL,
                                             stdout=write_ends[0], stderr=write_ends[1],
                                             pass_fds=tuple(write_ends[2:]), process_group=0)
        except OSError as exc:
            self._failed_to_start(f"Could not start {argv[0]}: {exc.strerror or exc}.")
            return
        finally:
            for write_end in write_ends:
                os.close(write_end)  # the child has its copies: its end (and its descendants') closes the pipes
        self._pid = self._process.pid
        self.session.started(self._pid)
        self._start_sampling(self._pid)  # from now: the child's whole life is sampled
        self._watch_end()

    def _watch_end(self) -> None:
        """Hear the child's end: its pidfd turns readable (Linux 5.3); else the clock asks."""
        try:
            fd = os.pidfd_open(self._pid)
        except (AttributeError, OSError):
            return  # _on_tick polls instead
        self._ended = QSocketNotifier(fd, QSocketNotifier.Type.Read, self)
        self._ended.activated.connect(self._on_ended)

    def _pipe(self, feed: Callable[[bytes], Output]) -> int:
        """A pipe whose bytes go to `feed`; returns the write end, for the child."""
        read_end, write_end = os.pipe()
        self._readers.append(PipeReader(read_end, feed, self._deliver, self))
        return write_end

    def _close_pipes(self) -> None:
        for reader in self._readers:
            reader.close()

    def cancel(self) -> None:
        """Stop the child and everything it started, now; the run ends as cancelled."""
        if self.running and self.session.cancel():
            # Now, not when the child's end is heard: a window closing on a run may be
            # gone by then, and its sampler with it.
            self._stop_sampling()
            self._kill()

    # -- slots -------------------------------------------------------------------------
    def _start_sampling(self, pid: int) -> None:
        if pid and self._sampling is None and not self.session.done:
            self._sampling = SamplerThread(ResourceSampler(pid, self._gpu))
            self._sampling.start()

    def _drain(self) -> None:
        """What the pipes still hold once the child is gone, before the record is closed.
        Its leftovers were ended first, so this is what they wrote before: bounded in time
        all the same, as the command line's wait for the pipes is."""
        for reader in self._readers:
            reader.read(EXIT_DRAIN_S)
        self._close_pipes()

    def _deliver(self, output: Output) -> None:
        child = self.session.warm_child
        if child is not None and child != self._followed and self._sampling is not None:
            self._followed = child
            self._sampling.follow(child)  # the warm-started script is the server's child
        if output.log:
            self.log_lines.emit(output.log)
        if output.events or output.log:
            self._watcher.changed(self.record, output)
        if output.events:
            self.event_applied.emit(self.record)
        if output.stop:
            self._stop_at_ready()

    def _stop_at_ready(self) -> None:
        """The program reached its ready point: TERM to its group now, KILL after a grace."""
        self.session.stopping()
        pid = self._pid
        if pid and self._alive:
            try:
                os.killpg(pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                return
            QTimer.singleShot(int(STOP_GRACE_S * 1000), self, self._kill_if_running)

    def _kill_if_running(self) -> None:
        if self.running:
            self._kill()

    def _on_tick(self) -> None:
        if self._ended is None and self._process is not None and self._process.poll() is not None:
            self._on_ended()  # no pidfd to tell us
            return
        if self.session.expired(time.monotonic()):
            self._kill()
            return
        self._collect()

    def _collect(self) -> None:
        """The sampler's batch into the session (every sample), then to the views (one signal)."""
        batch = self._sampling.drain() if self._sampling is not None else []
        if not batch or self.session.done:
            return
        for wall, rss, gpu in batch:
            self.session.sample(wall, rss, gpu)
        self._watcher.changed(self.record, None)
        launched = self.record.launched_at
        self.sampled.emit([(wall - launched, rss, gpu) for wall, rss, gpu in batch])

    def _stop_sampling(self) -> None:
        self._clock.stop()
        if self._sampling is not None:
            self._sampling.stop()

    def _failed_to_start(self, message: str) -> None:
        self._close_pipes()
        self._stop_sampling()
        self.session.failed_to_start(message)
        self._end()

    def _on_ended(self) -> None:
        if self._ended is not None:
            self._ended.setEnabled(False)
            os.close(int(self._ended.socket()))
            self._ended.deleteLater()
            self._ended = None
        assert self._process is not None
        returncode = self._process.wait()  # it has ended: no wait at all
        self._stop_sampling()
        self._collect()  # what was read before the end belongs to the run
        if self._pid:  # ours, from Popen: the record's pid is whatever the child claimed
            end_group(self._pid, tree=False)  # a descendant may still run in the child's group
        end_leftovers(self.session.marker)  # and one that left the group and outlived the child
        self._drain()
        _record, output = self.session.exited(returncode if returncode >= 0 else None,
                                              -returncode if returncode < 0 else None)
        self._deliver(output)
        self._end()

    def _kill(self) -> None:
        if self._alive and self._pid:
            end_group(self._pid)

    def _end(self) -> None:
        self._watcher.ended(self.record)
        self.finished.emit(self.record)
