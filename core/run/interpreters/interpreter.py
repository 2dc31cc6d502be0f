"""Does an interpreter have TensorFlow, and which stack? Asked without importing it.

One child of the interpreter reads its Python version, TensorFlow's and Keras' installed
versions (keras, tf-keras, and whether TF_USE_LEGACY_KERAS asks for tf-keras), and how
TensorFlow was built (its generated build_info.py, read as a file). Importing TensorFlow
takes seconds; reading these takes milliseconds, so the check stays cheap enough to run
whenever the user picks an interpreter. observed.py turns the answer into words.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from typing import Any

from .observed import InterpreterStack, observed_on, stack_of

# Runs inside the chosen interpreter: standard library only, valid on Python 3.8+.
CHECK_CODE = r"""
import importlib.util, json, os, platform, sys
try:
    from importlib import metadata
except ImportError:
    metadata = None

def installed(*dists):
    for dist in dists:
        try:
            return metadata.version(dist)
        except Exception:
            pass
    return None

version = build = None
spec = importlib.util.find_spec("tensorflow")
if spec is not None:
    version = installed("tensorflow", "tensorflow-cpu", "tf-nightly", "tensorflow-macos",
                        "tensorflow-intel") or "unknown"
    for root in spec.submodule_search_locations or []:
        name = os.path.join(root, "python", "platform", "build_info.py")
        try:
            scope = {}
            with open(name) as f:
                exec(compile(f.read(), name, "exec"), scope)
            build = dict(scope["build_info"])
            break
        except Exception:
            pass
print(json.dumps({"python": platform.python_version(), "executable": sys.executable,
                  "tensorflow": version, "keras": installed("keras"), "tf_keras": installed("tf-keras", "tf_keras"),
                  "legacy_keras": os.environ.get("TF_USE_LEGACY_KERAS"), "build_info": build}, default=str))
"""


@dataclass(frozen=True)
class InterpreterInfo:
    python: str
    ok: bool
    message: str
    python_version: str | None = None
    tensorflow: str | None = None
    stack: InterpreterStack | None = None  # what it runs a program with, when TensorFlow is there


def check_command(python: str) -> list[str]:
    return [python, "-c", CHECK_CODE]


def answer_of(python: str, exit_code: int | None, stdout: str, stderr: str = "") -> dict[str, Any] | str:
    """The JSON object a snippet printed last, or why there is none: the interpreter did not
    run as Python (the last line of its stderr says why), or answered something else."""
    try:
        data = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        reason = (stderr.strip().splitlines() or [f"exit code {exit_code}"])[-1]
        return f"{python} did not run as Python ({reason})."
    return data if isinstance(data, dict) else f"{python} gave an unexpected answer."


@dataclass(frozen=True)
class Asked:
    exit_code: int | None
    stdout: str
    stderr: str


def ask(python: str, code: str, timeout: float, longer: str = "") -> Asked | str:
    """Run `code` with `python -c`, blocking at most `timeout` seconds; or why it could not.

    The child gets its own session, so a wrapper script's children end with it on a
    timeout, and a grandchild that left the group cannot hold its pipes open for long.
    `longer` says how the caller allows more time ("or allow longer with --timeout")."""
    try:
        child = subprocess.Popen([python, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    except FileNotFoundError:
        return f"The interpreter {python} does not exist. Give the path of a Python executable."
    except PermissionError:
        return f"The interpreter {python} is not executable (chmod +x it, or choose another)."
    except OSError as exc:
        return f"{python} could not be started: {exc.strerror or exc}."
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.communicate(timeout=5)
        return f"{python} did not answer within {timeout:g} s; check that it starts (run it by hand){longer}."
    return Asked(child.returncode, stdout, stderr)


def interpret_check(python: str, exit_code: int | None, stdout: str, stderr: str = "") -> InterpreterInfo:
    """Turn the check's output into a verdict with a message a user can act on."""
    data = answer_of(python, exit_code, stdout, stderr)
    if isinstance(data, str):
        return InterpreterInfo(python, False, data)
    version = data.get("python")
    if not data.get("tensorflow"):
        return InterpreterInfo(
            python, False,
            f"{python} (Python {version}) has no TensorFlow. Install it with: "
            f"{python} -m pip install tensorflow",
            version,
        )
    stack = stack_of(data)
    return InterpreterInfo(python, True, f"{stack.words}. {observed_on(stack)}.", version,
                           data["tensorflow"], stack)
