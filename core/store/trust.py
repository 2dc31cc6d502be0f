"""Trust in shared profiles: what a profile would run, and whether its user accepted that.

Profiles travel between people as data, but some settings run code: a variable that
makes every program load a library (LD_PRELOAD) or source a file (BASH_ENV), a folder
put first on Python's path (where a sitecustomize.py runs at start), an interpreter,
modules imported before load, a model built by calling a function, Keras safe mode off.
A profile with any of these is used only after its user has seen the list and accepted
it; the acceptance is the SHA-256 of the file's bytes, so any edit needs it again.
Profiles a user saves themselves are accepted as they are written.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import tomllib
from pathlib import Path

import tomli_w

from ..probe.model_files import is_builder
from ..settings.config import LaunchConfig
from .atomic import atomic_write

# Variables that make a process run code it would not run otherwise, and how.
CODE_VARIABLES: dict[str, str] = {
    "LD_PRELOAD": "loads these libraries into every program started",
    "LD_AUDIT": "loads these libraries into every program started",
    "LD_LIBRARY_PATH": "chooses the folders native libraries (TensorFlow's, CUDA's) are loaded from",
    "PATH": "chooses which programs run when a command is named (python, nvidia-smi, ...)",
    "PYTHONPATH": "puts these folders first on Python's path: a sitecustomize.py or any module there runs",
    "PYTHONHOME": "replaces Python's standard library with the one in this folder",
    "PYTHONSTARTUP": "runs this file when Python starts interactively",
    "PYTHONUSERBASE": "chooses the user site folder, whose .pth files and usercustomize run at start",
    "PYTHONPYCACHEPREFIX": "chooses the folder compiled Python files are read from",
    "PYTHONBREAKPOINT": "names a function that runs at every breakpoint()",
    "PYTHONWARNINGS": "imports the modules its warning filters name",
    "BASH_ENV": "runs this file before every bash script",
    "ENV": "runs this file when sh starts",
    "GCONV_PATH": "loads character-set converters (native code) from these folders",
    "NODE_OPTIONS": "adds options (such as --require) to every node program",
    "PERL5OPT": "adds options (such as -M) to every perl program",
    "PERL5LIB": "puts these folders first on perl's path",
    "RUBYOPT": "adds options (such as -r) to every ruby program",
    "JAVA_TOOL_OPTIONS": "adds options (such as -javaagent) to every JVM",
}
CODE_PREFIXES = ("LD_", "DYLD_")  # every dynamic-loader variable chooses native code


def code_it_runs(config: LaunchConfig) -> list[str]:
    """Everything these settings would run besides the user's own command and model
    file, as lines a person can judge; empty for settings that are plain data."""
    lines = []
    for name, value in sorted(config.extra_env.items()):
        why = CODE_VARIABLES.get(name) or ("a dynamic-loader variable" if name.startswith(CODE_PREFIXES) else None)
        if why:
            lines.append(f"sets {name}={value} ({why})")
    if os.path.abspath(config.python) != os.path.abspath(sys.executable):
        lines.append(f"runs the interpreter {config.python}")
    lines += [f"imports {target} before loading the model (its code runs)" for target in config.imports]
    if is_builder(config.model):
        lines.append(f"builds the model by calling {config.model}")
    if config.unsafe_deserialization:
        lines.append("loads the model with Keras safe mode off (Lambda layers run code from the file)")
    return lines


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class TrustFile:
    """The accepted profiles: file path -> SHA-256 of the bytes that were accepted.

    A file that cannot be read counts as empty: nothing is trusted by mistake.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def _entries(self) -> dict[str, dict[str, str]]:
        try:
            data = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return {}
        entries = data.get("accepted")
        if not isinstance(entries, dict):
            return {}
        return {k: v for k, v in entries.items() if isinstance(v, dict) and isinstance(v.get("sha256"), str)}

    def accepted(self, profile_path: Path) -> str | None:
        """The digest accepted for this file, or None."""
        entry = self._entries().get(_key(profile_path))
        return entry["sha256"] if entry else None

    def accept(self, profile_path: Path, sha256: str) -> None:
        entries = self._entries()
        entries[_key(profile_path)] = {"sha256": sha256, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._write(entries)

    def forget(self, profile_path: Path) -> None:
        entries = self._entries()
        if entries.pop(_key(profile_path), None) is not None:
            self._write(entries)

    def _write(self, entries: dict[str, dict[str, str]]) -> None:
        # 0600: whoever can write this file decides what runs under this user's name.
        atomic_write(self.path, tomli_w.dumps({"version": 1, "accepted": entries}).encode("utf-8"), mode=0o600)


def _key(path: Path) -> str:
    return str(Path(path).absolute())
