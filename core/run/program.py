"""A program as a run's subject: its argv, the launch hook's instructions, and the checks
that say before exec why it cannot start.

The program is the user's own command line. A bare `python` or `python3` at its start means
the chosen interpreter (the Interpreter setting has one meaning everywhere); an interpreter
named at its start (`ENV/bin/python train.py`, `python3.10 train.py`) is read once, by
normal_subject, as that setting: the same subject as `--python ENV/bin/python -- python
train.py` for bench, doctor, sweep, warm start and profiles. Anything else runs as written,
from the working folder. The launch hook (settings/launch_hook) reports
what the program does on a pipe of its own: TFLAUNCH_EVENTS_FD names the descriptor the
driver made, TFLAUNCH_OBSERVE how far to measure. The program's stdout and stderr are its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil

from ..probe.outside_files import same_interpreter
from ..settings.config import LaunchConfig, Problem

EVENTS_FD_ENV = "TFLAUNCH_EVENTS_FD"
OBSERVE_ENV = "TFLAUNCH_OBSERVE"
BARE_PYTHONS = ("python", "python3")
# A command word that names a Python interpreter: python, python3, python3.10 (by its file name).
INTERPRETER_NAME = re.compile(r"python(\d+(\.\d+)?)?\Z")
# After the ready point tflaunch ends the program: SIGTERM to its group, then SIGKILL after this.
STOP_GRACE_S = 2.0


def program_argv(config: LaunchConfig) -> list[str]:
    """The argv to exec: the program's, with a bare python meaning the chosen interpreter."""
    argv = list(config.program)
    if argv and argv[0] in BARE_PYTHONS:
        argv[0] = config.python
    return argv


def normal_subject(config: LaunchConfig) -> LaunchConfig:
    """The one reading of a program's command line: an interpreter named as its first word
    becomes the Interpreter setting, and the word a bare `python`. When the setting is
    tflaunch's default the command's interpreter is chosen, as the command spells it; when
    the setting was given and is the same interpreter (the same file started from the same
    folder: a venv is its folder), the setting's spelling is kept.
    Another interpreter than a setting given is left as typed: program_problems refuses it."""
    if not config.program or config.program[0] in BARE_PYTHONS:
        return config
    path = command_interpreter(config)
    if path is None:
        return config
    if config.python == LaunchConfig().python:
        return config.replace(python=path, program=(BARE_PYTHONS[0], *config.program[1:]))
    if same_interpreter(path, config.python):
        return config.replace(program=(BARE_PYTHONS[0], *config.program[1:]))
    return config


def command_interpreter(config: LaunchConfig) -> str | None:
    """The interpreter the program's first word names, by absolute path (links kept: a venv's
    python is a link), as the launch finds it: a path from the working folder, a name on
    the launch's PATH; None when the word is a bare python (the setting already), no
    interpreter's, or names none that exists (program_problems says so)."""
    first = config.program[0] if config.program else ""
    if first in BARE_PYTHONS or not INTERPRETER_NAME.match(os.path.basename(first)):
        return None
    if os.sep in first:
        folder = os.path.expanduser(config.workdir) if config.workdir else os.getcwd()
        path = os.path.join(folder, os.path.expanduser(first))
    else:
        path = shutil.which(first, path=config.extra_env.get("PATH", os.environ.get("PATH"))) or ""
    return os.path.abspath(path) if path and os.path.isfile(path) and os.access(path, os.X_OK) else None


def observe_settings(config: LaunchConfig, anatomy: bool = False) -> str:
    """What the launch hook needs to know of the measurement (TFLAUNCH_OBSERVE); `anatomy`:
    profile the first step (an extra run's, never a measured one)."""
    return json.dumps({"until": config.until, "steady": config.steady, **({"anatomy": True} if anatomy else {})})


def program_problems(config: LaunchConfig) -> list[Problem]:
    """Why the program cannot start, before anything is launched: a command that is not
    there, not executable, or a script file that is missing from the working folder."""
    config = normal_subject(config)
    argv = program_argv(config)
    if not argv:
        return [Problem("program", "Give the program's command line, for example: python train.py --epochs 1.")]
    named = command_interpreter(config)
    if named is not None:  # another interpreter than the one chosen: normal_subject kept it
        return [Problem("program", f"The command starts with the interpreter {argv[0]}, and the interpreter "
                                   f"setting is {config.python}: a run has one interpreter. Start the command with "
                                   f"python to run {config.python}, or choose {argv[0]} as the interpreter "
                                   "(--python; Interpreter in the app).")]
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
