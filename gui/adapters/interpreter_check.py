"""Asks an interpreter, in the background, whether it has TensorFlow."""

from __future__ import annotations

from PySide6.QtCore import QObject, QProcess, Signal

from tflaunch.core.run.interpreters.interpreter import check_command
from tflaunch.core.run.interpreters.interpreter_verdict import interpreter_verdict, not_started
from tflaunch.core.run.interpreters.probe_bytecode import compile_command
from tflaunch.core.run.launch_check import known_flags_command


class InterpreterCheck(QObject):
    """One check at a time; asking again abandons the previous question."""

    checked = Signal(object)  # InterpreterVerdict (an InterpreterInfo with the interpreter's own words)
    xla_flags_learned = Signal(str)  # the interpreter whose TensorFlow was asked
    compiled = Signal(str)  # the interpreter tflaunch's child code was compiled for (or tried)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._process: QProcess | None = None
        self._flags: QProcess | None = None
        self._compiling: QProcess | None = None
        self._compiled: set[str] = set()  # interpreters tflaunch's child code was compiled for

    def check(self, python: str) -> None:
        self._abandon()
        process = QProcess(self)
        self._process = process
        process.finished.connect(lambda code, _status: self._on_finished(process, python, code))
        process.errorOccurred.connect(lambda error: self._on_error(process, python, error))
        command = check_command(python)
        process.start(command[0], command[1:])
        self._compile_for(python)

    def _compile_for(self, python: str) -> None:
        """Compile the code every measured child imports for this interpreter, once, beside
        the check (core/run/interpreters/probe_bytecode.py says why); its end is not waited on."""
        if python in self._compiled or self._compiling is not None:
            return
        self._compiled.add(python)
        compiling = QProcess(self)
        self._compiling = compiling
        compiling.finished.connect(lambda *_: self._on_compiled(compiling, python))
        compiling.errorOccurred.connect(lambda *_: self._on_compiled(compiling, python))
        command = compile_command(python)
        compiling.start(command[0], command[1:])

    def _on_compiled(self, compiling: QProcess, python: str) -> None:
        if compiling is self._compiling:
            self._compiling = None
            compiling.deleteLater()
            self.compiled.emit(python)

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
        flags = QProcess(self)
        self._flags = flags
        flags.finished.connect(lambda *_: self._on_flags_finished(flags, python))
        command = known_flags_command(python)
        flags.start(command[0], command[1:])

    def _on_flags_finished(self, flags: QProcess, python: str) -> None:
        if flags is self._flags:
            self._flags = None
            self.xla_flags_learned.emit(python)
        flags.deleteLater()

    def _stop_flags(self) -> None:
        if self._flags is not None:
            old, self._flags = self._flags, None
            old.finished.disconnect()
            old.finished.connect(old.deleteLater)  # reaped by Qt's event loop, not waited on
            old.kill()

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
        if self._compiling is not None:
            old, self._compiling = self._compiling, None
            old.finished.disconnect()
            old.errorOccurred.disconnect()
            old.finished.connect(old.deleteLater)
            old.kill()

    def _abandon(self) -> None:
        if self._process is not None:
            old, self._process = self._process, None
            # Disconnect first: killing emits finished, and at shutdown that would call
            # back into objects Qt is already deleting.
            old.finished.disconnect()
            old.errorOccurred.disconnect()
            old.finished.connect(old.deleteLater)  # reaped by Qt's event loop, not waited on
            old.kill()
