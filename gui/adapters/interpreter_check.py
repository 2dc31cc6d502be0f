"""Asks an interpreter, in the background, whether it has TensorFlow."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QProcess, Signal

from tflaunch.core.run.interpreters.interpreter import check_command
from tflaunch.core.run.interpreters.interpreter_verdict import interpreter_verdict, not_started
from tflaunch.core.run.launch_check import known_flags_command


class InterpreterCheck(QObject):
    """One check at a time; asking again abandons the previous question."""

    checked = Signal(object)  # InterpreterVerdict (an InterpreterInfo with the interpreter's own words)
    xla_flags_learned = Signal(str)  # the interpreter whose TensorFlow was asked

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._process: QProcess | None = None
        self._flags: QProcess | None = None

    def check(self, python: str) -> None:
        self._abandon()
        process = QProcess(self)
        self._process = process
        process.finished.connect(lambda code, _status: self._on_finished(process, python, code))
        process.errorOccurred.connect(lambda error: self._on_error(process, python, error))
        command = check_command(python)
        process.start(command[0], command[1:])

    @staticmethod
    def _on_helper_error(process: QProcess, error: QProcess.ProcessError, done: Callable[[QProcess], None]) -> None:
        if error is QProcess.ProcessError.FailedToStart:  # no finished follows
            done(process)

    def _background(self, command: list[str], done: Callable[[QProcess], None]) -> QProcess:
        """A helper process whose end (or failure to start) calls `done` with it."""
        process = QProcess(self)
        process.finished.connect(lambda *_: done(process))
        process.errorOccurred.connect(lambda error: self._on_helper_error(process, error, done))
        process.start(command[0], command[1:])
        return process

    def _on_finished(self, process: QProcess, python: str, code: int) -> None:
        if process is not self._process:
            return
        out = process.readAllStandardOutput().data().decode("utf-8", "replace")
        err = process.readAllStandardError().data().decode("utf-8", "replace")
        self._process = None
        process.deleteLater()
        self.checked.emit(interpreter_verdict(python, code, out, err))

    def learn_xla_flags(self, python: str) -> None:
        """Let the interpreter note which TF_XLA_FLAGS its TensorFlow knows (a scan of
        seconds, once per TensorFlow install). Asked only when settings use TF_XLA_FLAGS,
        never at start-up: the scan would compete with the runs it is there to protect."""
        self._stop_flags()
        self._flags = self._background(known_flags_command(python), lambda done: self._on_flags_finished(done, python))

    def _on_flags_finished(self, flags: QProcess, python: str) -> None:
        if flags is self._flags:
            self._flags = None
            self.xla_flags_learned.emit(python)
        flags.deleteLater()

    def _stop_flags(self) -> None:
        if self._flags is not None:
            old, self._flags = self._flags, None
            _let_go(old)

    def _on_error(self, process: QProcess, python: str, error: QProcess.ProcessError) -> None:
        if process is not self._process or error is not QProcess.ProcessError.FailedToStart:
            return
        self._process = None
        process.deleteLater()
        self.checked.emit(not_started(python, process.errorString()))

    def stop(self) -> None:
        """Abandon the question in flight; nothing will be emitted for it."""
        self._abandon()
        self._stop_flags()

    def _abandon(self) -> None:
        if self._process is not None:
            old, self._process = self._process, None
            _let_go(old)


def _let_go(process: QProcess) -> None:
    """End a process nobody waits for any more. Disconnect first: killing emits finished, and
    at shutdown that would call back into objects Qt is already deleting."""
    process.finished.disconnect()
    process.errorOccurred.disconnect()
    process.finished.connect(process.deleteLater)  # reaped by Qt's event loop, not waited on
    process.kill()
