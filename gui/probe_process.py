"""ProbeProcess: one probe run in a QProcess, turned into RunRecord updates.

The adapter only moves bytes: lines are split by core's LineBuffer, parsed by core's
EventParser and folded into core's RunRecord, so all of that is tested without Qt.
Nothing here blocks: it reacts to QProcess signals and a sampling QTimer.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from tflaunch.core.config import LaunchConfig
from tflaunch.core.events import EventParser, LineBuffer
from tflaunch.core.gpus import GpuMemorySampler
from tflaunch.core.launch import profile_environment
from tflaunch.core.process_tree import TreeSampler, kill_tree
from tflaunch.core.run import Failure, RunRecord

SAMPLE_HZ = 15


class ProbeProcess(QObject):
    """Runs one LaunchConfig; emits the record as it grows and when it is done."""

    event_applied = Signal(object)  # RunRecord
    sampled = Signal(float, int, object)  # seconds since launch, RSS bytes, {gpu: bytes}
    log_lines = Signal(list)  # the child's stderr; for a script, its stdout too
    finished = Signal(object)  # RunRecord

    def __init__(self, config: LaunchConfig, parent: QObject | None = None,
                 gpu_sampler: GpuMemorySampler | None = None, command: list[str] | None = None,
                 script: list[str] | None = None) -> None:
        """`script`: run this argv instead of the probe, with the settings applied as
        `tflaunch run --profile` does. `command`: replace the probe's argv (tests)."""
        super().__init__(parent)
        self.record = RunRecord(config, command=script)
        self._command = command or script
        self._parser = EventParser()
        self._stdout, self._stderr = LineBuffer(), LineBuffer()
        self._cancelled = self._timed_out = False
        self._tree: TreeSampler | None = None
        self._gpu = gpu_sampler
        self._process = QProcess(self)
        self._process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        if script is not None:
            environment = QProcessEnvironment()
            for name, value in profile_environment(config).items():
                environment.insert(name, value)
            self._process.setProcessEnvironment(environment)
        self._process.readyReadStandardOutput.connect(self._on_stdout)
        self._process.readyReadStandardError.connect(self._on_stderr)
        self._process.started.connect(self._on_started)
        self._process.errorOccurred.connect(self._on_error)
        self._process.finished.connect(self._on_finished)
        self._sampler = QTimer(self)
        self._sampler.setInterval(1000 // SAMPLE_HZ)
        self._sampler.timeout.connect(self._on_sample)
        self._deadline = QTimer(self)
        self._deadline.setSingleShot(True)
        self._deadline.timeout.connect(self._on_deadline)

    @property
    def running(self) -> bool:
        return self._process.state() != QProcess.ProcessState.NotRunning

    def start(self) -> None:
        command = self._command or self.record.config.command()
        self.record.launched_at = time.time()
        self.record.phases["spawn"].started = self.record.launched_at
        self._deadline.start(int(self.record.config.timeout * 1000))
        self._process.start(command[0], command[1:])

    def cancel(self) -> None:
        """Stop the child and everything it started, now; the run ends as cancelled."""
        if self.running:
            self._cancelled = True
            self._kill()

    # -- slots -------------------------------------------------------------------------
    def _on_started(self) -> None:
        self._tree = TreeSampler(self._process.processId())
        self._sampler.start()

    def _on_stdout(self) -> None:
        data = self._process.readAllStandardOutput().data()
        self._handle_stdout(self._stdout.feed(data))

    def _on_stderr(self) -> None:
        lines = self._stderr.feed(self._process.readAllStandardError().data())
        self._handle_stderr(lines)

    def _handle_stdout(self, lines: list[str]) -> None:
        if self.record.is_script:  # a script's stdout is its own output, not events
            self._handle_stderr(lines)
            return
        changed = False
        for line in lines:
            event = self._parser.parse(line)
            if event is not None:
                self.record.apply(event)
                changed = True
        if changed:
            self.event_applied.emit(self.record)

    def _handle_stderr(self, lines: list[str]) -> None:
        if lines:
            for line in lines:
                self.record.add_stderr(line)
            self.log_lines.emit(lines)

    def _on_sample(self) -> None:
        if self._tree is None:
            return
        rss = self._tree.rss(time.monotonic())
        if rss is None:
            return
        now = time.time()
        gpu = self._gpu.sample([self._process.processId()]) if self._gpu and self._gpu.available else {}
        self.record.add_sample(now, rss)
        self.sampled.emit(now - self.record.launched_at, rss, gpu)

    def _on_deadline(self) -> None:
        if self.running:
            self._timed_out = True
            self._kill()

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error is QProcess.ProcessError.FailedToStart:
            python = self.record.config.python
            self.record.failure = Failure(
                "spawn_failed", f"Could not start {python}: {self._process.errorString()}."
            )
            self.record.failed_phase = "spawn"
            self._finish(None, None)

    def _on_finished(self, exit_code: int, status: QProcess.ExitStatus) -> None:
        self._on_stdout()
        self._on_stderr()
        self._handle_stdout(self._stdout.flush())
        self._handle_stderr(self._stderr.flush())
        crashed = status is QProcess.ExitStatus.CrashExit
        # On a crash Qt 6 reports the terminating signal's number as the exit code.
        self._finish(None if crashed else exit_code, exit_code if crashed else None)

    def _kill(self) -> None:
        pid = self._process.processId()
        if pid:
            kill_tree(pid)
        else:
            self._process.kill()

    def _finish(self, exit_code: int | None, exit_signal: int | None) -> None:
        if self.record.finished_at is not None:
            return
        self._sampler.stop()
        self._deadline.stop()
        self.record.malformed_lines = self._parser.malformed + self._parser.unknown
        self.record.finish(exit_code, exit_signal, cancelled=self._cancelled, timed_out=self._timed_out)
        self.finished.emit(self.record)
