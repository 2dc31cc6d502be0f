"""ProbeProcess: the app's driver of a ProbeSession, a QProcess and a sampling QTimer.

Only I/O lives here: bytes from the QProcess go to core's ProbeSession, which parses and
folds them into the RunRecord exactly as the command line's driver does; the clock and
the exit are reported to the same session. Nothing blocks: it reacts to QProcess
signals and timers. Watchers (the recorder that stores the run) hear what the CLI's hear.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from tflaunch.core.run.driver import Watcher
from tflaunch.core.run.gpus import GpuMemorySampler
from tflaunch.core.run.process_tree import end_group
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.sampling import ResourceSampler
from tflaunch.core.run.session import SAMPLE_INTERVAL_S, Output, ProbeSession


class ProbeProcess(QObject):
    """Runs one ProbeSession; emits the record as it grows and when it is done."""

    event_applied = Signal(object)  # RunRecord
    sampled = Signal(float, int, object)  # seconds since launch, RSS bytes, {gpu: bytes}
    log_lines = Signal(list)  # the child's stderr; for a script, its stdout too
    finished = Signal(object)  # RunRecord

    def __init__(self, session: ProbeSession, parent: QObject | None = None,
                 gpu_sampler: GpuMemorySampler | None = None, watcher: Watcher | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.record: RunRecord = session.record
        self._watcher = watcher or Watcher()
        self._gpu = gpu_sampler
        self._resources: ResourceSampler | None = None
        self._pid = 0
        self._process = QProcess(self)
        self._process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        # Its own process group, as the CLI's child: cancel and timeout end the whole group.
        self._process.setUnixProcessParameters(QProcess.UnixProcessFlag.CreateNewSession)
        self._process.readyReadStandardOutput.connect(self._on_stdout)
        self._process.readyReadStandardError.connect(self._on_stderr)
        self._process.started.connect(self._on_started)
        self._process.errorOccurred.connect(self._on_error)
        self._process.finished.connect(self._on_finished)
        self._sampler = QTimer(self)
        self._sampler.setInterval(round(SAMPLE_INTERVAL_S * 1000))
        self._sampler.timeout.connect(self._on_tick)

    @property
    def running(self) -> bool:
        return not self.session.done and self._process.state() != QProcess.ProcessState.NotRunning

    def start(self) -> None:
        if self.session.done:  # refused by the launch check
            self._watcher.ended(self.record)
            self.finished.emit(self.record)
            return
        argv, env = self.session.launch(time.time(), time.monotonic())
        environment = QProcessEnvironment()
        for name, value in env.items():
            environment.insert(name, value)
        self._process.setProcessEnvironment(environment)
        self._watcher.started(self.record)
        self._sampler.start()  # the deadline is checked on the same tick
        self._process.start(argv[0], argv[1:])

    def cancel(self) -> None:
        """Stop the child and everything it started, now; the run ends as cancelled."""
        if self.running and self.session.cancel():
            self._kill()

    # -- slots -------------------------------------------------------------------------
    def _on_started(self) -> None:
        pid = int(self._process.processId())
        self._pid = pid
        self.session.started(pid)
        self._resources = ResourceSampler(pid, self._gpu)

    def _on_stdout(self) -> None:
        self._deliver(self.session.stdout(self._process.readAllStandardOutput().data()))

    def _on_stderr(self) -> None:
        self._deliver(self.session.stderr(self._process.readAllStandardError().data()))

    def _deliver(self, output: Output) -> None:
        if output.log:
            self.log_lines.emit(output.log)
        if output.events or output.log:
            self._watcher.changed(self.record, output)
        if output.events:
            self.event_applied.emit(self.record)

    def _on_tick(self) -> None:
        if self.session.expired(time.monotonic()):
            self._kill()
            return
        sample = self._resources.sample() if self._resources is not None else None
        if sample is None:
            return
        now = time.time()
        self.session.sample(now, *sample)
        self._watcher.changed(self.record, None)
        self.sampled.emit(now - self.record.launched_at, sample[0], sample[1])

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error is QProcess.ProcessError.FailedToStart and not self.session.done:
            self._sampler.stop()
            self.session.failed_to_start(f"Could not start {self.record.config.python}: "
                                         f"{self._process.errorString()}.")
            self._end()

    def _on_finished(self, exit_code: int, status: QProcess.ExitStatus) -> None:
        self._on_stdout()
        self._on_stderr()
        self._sampler.stop()
        if self._pid:  # ours, from QProcess: the record's pid is whatever the child claimed
            end_group(self._pid, tree=False)  # a descendant may still run in the child's group
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
