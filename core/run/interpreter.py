"""Does an interpreter have TensorFlow, and which version? Asked without importing it.

Importing TensorFlow takes seconds; reading its installed metadata takes milliseconds,
so the check stays cheap enough to run whenever the user picks an interpreter.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

# Runs inside the chosen interpreter: standard library only, valid on Python 3.8+.
CHECK_CODE = r"""
import importlib.util, json, platform, sys
try:
    from importlib import metadata
except ImportError:
    metadata = None
version = None
if importlib.util.find_spec("tensorflow") is not None:
    version = "unknown"
    for dist in ("tensorflow", "tensorflow-cpu", "tf-nightly", "tensorflow-macos", "tensorflow-intel"):
        try:
            version = metadata.version(dist)
            break
        except Exception:
            pass
print(json.dumps({"python": platform.python_version(), "executable": sys.executable,
                  "tensorflow": version}))
"""


@dataclass(frozen=True)
class InterpreterInfo:
    python: str
    ok: bool
    message: str
    python_version: str | None = None
    tensorflow: str | None = None


def check_command(python: str) -> list[str]:
    return [python, "-c", CHECK_CODE]


def interpret_check(python: str, exit_code: int | None, stdout: str, stderr: str = "") -> InterpreterInfo:
    """Turn the check's output into a verdict with a message a user can act on."""
    try:
        data = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        reason = (stderr.strip().splitlines() or [f"exit code {exit_code}"])[-1]
        return InterpreterInfo(python, False, f"{python} did not run as Python ({reason}).")
    if not isinstance(data, dict):
        return InterpreterInfo(python, False, f"{python} gave an unexpected answer.")
    version = data.get("python")
    if not data.get("tensorflow"):
        return InterpreterInfo(
            python, False,
            f"{python} (Python {version}) has no TensorFlow. Install it with: "
            f"{python} -m pip install tensorflow",
            version,
        )
    tf = data["tensorflow"]
    return InterpreterInfo(python, True, f"Python {version}, TensorFlow {tf}", version, tf)


def check_interpreter(python: str, timeout: float = 30.0) -> InterpreterInfo:
    """Blocking check for the command line (the GUI runs the same command in a QProcess)."""
    try:
        done = subprocess.run(check_command(python), capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        return InterpreterInfo(python, False, f"The interpreter {python} does not exist.")
    except PermissionError:
        return InterpreterInfo(python, False, f"The interpreter {python} is not executable.")
    except OSError as exc:
        return InterpreterInfo(python, False, f"{python} could not be started: {exc.strerror or exc}.")
    except subprocess.TimeoutExpired:
        return InterpreterInfo(python, False, f"{python} did not answer within {timeout:.0f} s.")
    return interpret_check(python, done.returncode, done.stdout, done.stderr)
