"""A program as a run's subject: its argv, the launch hook's instructions, and the checks
that say before exec why it cannot start.

The program is the user's own command line. A bare `python` or `python3` at its start means
the chosen interpreter (the Interpreter setting has one meaning everywhere); anything else
runs as written, from the working folder. The launch hook (settings/launch_hook) reports
what the program does on a pipe of its own: TFLAUNCH_EVENTS_FD names the descriptor the
driver made, TFLAUNCH_OBSERVE how far to measure. The program's stdout and stderr are its own.
"""

from __future__ import annotations

import json
import os
import shutil

from ..settings.config import LaunchConfig, Problem

EVENTS_FD_ENV = "TFLAUNCH_EVENTS_FD"
OBSERVE_ENV = "TFLAUNCH_OBSERVE"
BARE_PYTHONS = ("python", "python3")
# After the ready point tflaunch ends the program: SIGTERM to its group, then SIGKILL after this.
STOP_GRACE_S = 2.0


def program_argv(config: LaunchConfig) -> list[str]:
    """The argv to exec: the program's, with a bare python meaning the chosen interpreter."""
    argv = list(config.program)
    if argv and argv[0] in BARE_PYTHONS:
        argv[0] = config.python
    return argv


def observe_settings(config: LaunchConfig, anatomy: bool = False) -> str:
    """What the launch hook needs to know of the measurement (TFLAUNCH_OBSERVE); `anatomy`:
    profile the first step (an extra run's, never a measured one)."""
    return json.dumps({"until": config.until, "steady": config.steady, **({"anatomy": True} if anatomy else {})})


def program_problems(config: LaunchConfig) -> list[Problem]:
    """Why the program cannot start, before anything is launched: a command that is not
    there, not executable, or a script file that is missing from the working folder."""
    argv = program_argv(config)
    if not argv:
        return [Problem("program", "Give the program's command line, for example: python train.py --epochs 1.")]
    folder = os.path.expanduser(config.workdir) if config.workdir else os.getcwd()
    if not os.path.isdir(folder):
        return []  # the working folder's own problem says so (LaunchConfig.validate)
    command = argv[0]
    if os.sep in command:
        path = command if os.path.isabs(command) else os.path.join(folder, command)
        if not os.path.exists(path):
            return [Problem("program", f"The program {command} was not found (looked in {folder}). Check the "
                                       "path, or the working folder it is relative to.")]
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            return [Problem("program", f"The program {command} is not executable. Run it through its "
                                       f"interpreter (python {command}) or make it executable (chmod +x).")]
    elif shutil.which(command) is None:
        return [Problem("program", f"The command {command} was not found on PATH. Give its full path, or start "
                                   "the line with python to use the chosen interpreter.")]
    script = _script_of(argv)
    if script is not None and not os.path.isfile(os.path.join(folder, os.path.expanduser(script))):
        return [Problem("program", f"The script {script} was not found in {folder}. Check its path, or set the "
                                   "working folder it is relative to (--cwd; Working folder in the app).")]
    return []


def _script_of(argv: list[str]) -> str | None:
    """The .py file an interpreter's argv runs, if it names one (not -m or -c)."""
    if len(argv) < 2 or "python" not in os.path.basename(argv[0]):
        return None
    for arg in argv[1:]:
        if arg in ("-m", "-c"):
            return None
        if not arg.startswith("-"):
            return arg if arg.endswith(".py") else None
    return None
