"""The interpreter check's verdict for a person: what is wrong in a line or two, what to do,
and the interpreter's own words kept apart (for a tooltip or the log), never in the line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .interpreter import InterpreterInfo, answer_of, interpret_check

DETAIL_CHARS = 4000  # of the interpreter's own output, kept for the tooltip
REASON_CHARS = 160  # of its last error line, quoted in the verdict
_ERROR_LINE = re.compile(r"^(?P<kind>[A-Za-z_][\w.]*(?:Error|Exception)): ?(?P<text>.*)$")


@dataclass(frozen=True)
class InterpreterVerdict(InterpreterInfo):
    """An InterpreterInfo whose message is plain words; `detail` is what the interpreter wrote."""

    detail: str = ""


def interpreter_verdict(python: str, exit_code: int | None, stdout: str, stderr: str = "") -> InterpreterVerdict:
    """The check's output (check_command's) as a verdict a user can act on."""
    info = interpret_check(python, exit_code, stdout, stderr)
    detail = _detail(stdout, stderr)
    if info.ok:
        return InterpreterVerdict(python, True, info.message, info.python_version, info.tensorflow, info.stack,
                                  detail=detail)
    choose = "choose another interpreter"
    install = f"Install it there ({python} -m pip install tensorflow) or {choose}."
    if not isinstance(answer_of(python, exit_code, stdout, stderr), str):  # it ran the check: no TensorFlow
        version = f" (Python {info.python_version})" if info.python_version else ""
        return _failed(python, f"{python}{version} has no TensorFlow. {install}", info, detail)
    error = _last_error(stderr)
    if error is not None and error[0] in ("ModuleNotFoundError", "ImportError") and "tensorflow" in error[1]:
        return _failed(python, f"{python} has no TensorFlow: {_short(error[1])}. {install}", info, detail)
    if error is not None and error[0] == "SyntaxError":
        return _failed(python, f"{python} could not run tflaunch's check ({_short(error[0] + ': ' + error[1])}): it "
                               f"is not Python 3.8 or newer. Give the path of a newer Python, or {choose}.", info,
                       detail)
    if error is not None:
        return _failed(python, f"{python} fails before it can run anything: {_short(error[0] + ': ' + error[1])}. "
                               f"Repair that environment or {choose}.", info, detail)
    said = _last_line(stderr)
    why = f"it said: {_short(said)}" if said else f"it exited with code {exit_code} and said nothing"
    return _failed(python, f"{python} did not run as Python ({why}). Give the path of a Python executable with "
                           f"TensorFlow, or {choose}.", info, detail)


def not_started(python: str, reason: str) -> InterpreterVerdict:
    """The interpreter could not be started at all (no such file, not executable)."""
    return InterpreterVerdict(python, False, f"{python} cannot be started ({_short(reason.rstrip('.'))}). Give the "
                                             "path of a Python executable with TensorFlow.", detail=reason)


def _failed(python: str, message: str, info: InterpreterInfo, detail: str) -> InterpreterVerdict:
    return InterpreterVerdict(python, False, message, info.python_version, info.tensorflow, detail=detail)


def _detail(stdout: str, stderr: str) -> str:
    parts = [text.strip() for text in (stderr, stdout) if text.strip()]
    whole = "\n".join(parts)
    return whole if len(whole) <= DETAIL_CHARS else "…" + whole[-DETAIL_CHARS:]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _last_error(stderr: str) -> tuple[str, str] | None:
    """The exception a traceback ended with: (its class, its text)."""
    for line in reversed(stderr.splitlines()):
        match = _ERROR_LINE.match(line.strip())
        if match:
            return match["kind"].rsplit(".", 1)[-1], match["text"].strip()
    return None


def _short(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1] + "…"
