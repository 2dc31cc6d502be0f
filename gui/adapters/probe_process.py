"""ProbeProcess: the app's driver of a ProbeSession, a QProcess, a sampling thread and a clock.

Only I/O lives here: the child's bytes go to core's ProbeSession, which parses and folds
them into the RunRecord exactly as the command line's driver does; the clock, the memory
samples and the exit are reported to the same session, all on the GUI thread. QProcess
starts the child and says when it ended; its stdout and stderr are pipes of ours, as the
command line's are, read at the pipe's speed (PipeReader) rather than a pipe-full per turn.
Memory is read on a thread of its own (SamplerThread) and collected on the clock's tick.
Nothing blocks: it reacts to QProcess signals, pipe notifiers and timers. Watchers (the
recorder that stores the run) hear what the CLI's hear.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from tflaunch.core.run.driver import EXIT_DRAIN_S, Watcher
from tflaunch.core.run.gpus.nvml import GpuMemorySampler
from tflaunch.core.run.process_tree import end_group, end_leftovers
from tflaunch.core.run.program import STOP_GRACE_S
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.sampling import ResourceSampler
from tflaunch.core.run.session import Output, ProbeSession

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
        self._program = session.record.config.python
        self._process = QProcess(self)
        # Its own process group, as the CLI's child: cancel and timeout end the whole group.
        self._process.setUnixProcessParameters(QProcess.UnixProcessFlag.CreateNewSession)
        self._process.started.connect(self._on_started)
        self._process.errorOccurred.connect(self._on_error)
        self._process.finished.connect(self._on_finished)
        self._clock = QTimer(self)
        self._clock.setInterval(TICK_MS)
        self._clock.timeout.connect(self._on_tick)
        # stdout, stderr and a program's event channel, each read as the child writes it.
        self._readers: list[PipeReader] = []

    @property
    def running(self) -> bool:
        return not self.session.done and self._process.state() != QProcess.ProcessState.NotRunning

    def start(self) -> None:
        if self.session.done:  # refused by the launch check
            self._watcher.ended(self.record)
            self.finished.emit(self.record)
            return
        argv, env = self.session.launch(time.time(), time.monotonic())
        # QProcess opens a path for a child's stream: /dev/fd/N opens our pipe's write end again.
        write_ends = [self._pipe(self.session.stdout), self._pipe(self.session.stderr)]
        self._process.setStandardOutputFile(f"/dev/fd/{write_ends[0]}")
        self._process.setStandardErrorFile(f"/dev/fd/{write_ends[1]}")
        if self.session.observes:
            write_ends.append(self._pipe(self.session.events))
            os.set_inheritable(write_ends[-1], True)  # QProcess execs without closing inherited descriptors
            env.update(self.session.events_fd_env(write_ends[-1]))
        environment = QProcessEnvironment()
        for name, value in env.items():
            environment.insert(name, value)
        self._process.setProcessEnvironment(environment)
        if self.session.cwd:
            self._process.setWorkingDirectory(self.session.cwd)
        self._watcher.started(self.record)
        self._clock.start()
        self._program = argv[0]
        self._process.start(argv[0], argv[1:])
        for write_end in write_ends:
            os.close(write_end)  # the child has its copies: its end (and its descendants') closes the pipes
        # Sampled from now, not from the `started` signal: that comes through the event loop,
        # which a busy or loaded GUI thread held for 0.7 s, most of a short child's life. Qt
        # starts a child as vfork does, so its pid is already the program, not a copy of us.
        self._start_sampling(int(self._process.processId()))

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
    def _on_started(self) -> None:
        pid = int(self._process.processId())
        self._pid = pid
        self.session.started(pid)
        self._start_sampling(pid)

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
        pid = int(self._process.processId())
        if pid:
            try:
                os.killpg(pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                return
            QTimer.singleShot(int(STOP_GRACE_S * 1000), self, self._kill_if_running)

    def _kill_if_running(self) -> None:
        if self.running:
            self._kill()

    def _on_tick(self) -> None:
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

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error is QProcess.ProcessError.FailedToStart and not self.session.done:
            self._close_pipes()
            self._stop_sampling()
            self.session.failed_to_start(f"Could not start {self._program}: "
                                         f"{self._process.errorString()}.")
            self._end()

    def _on_finished(self, exit_code: int, status: QProcess.ExitStatus) -> None:
        self._stop_sampling()
        self._collect()  # what was read before the end belongs to the run
        if self._pid:  # ours, from QProcess: the record's pid is whatever the child claimed
            end_group(self._pid, tree=False)  # a descendant may still run in the child's group
        end_leftovers(self.session.marker)  # and one that left the group and outlived the child
        self._drain()
        crashed = status is QProcess.ExitStatus.CrashExit
        # On a crash Qt 6 reports the terminating signal's number as the exit code.
        _record, output = self.session.exited(None if crashed else exit_code, exit_code if crashed else None)
        self._deliver(output)
        self._end()

    def _kill(self) -> None:
        pid = int(self._process.processId())
        if pid:
            end_group(pid)
        elif self._process.state() != QProcess.ProcessState.NotRunning:
            self._process.kill()

    def _end(self) -> None:
        self._watcher.ended(self.record)
        self.finished.emit(self.record)
