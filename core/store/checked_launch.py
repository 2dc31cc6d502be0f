"""What a profile's yes covers, and the settings a launch executes: exactly what was checked.

A profile's acceptance is the SHA-256 of its file plus that of every piece of code it
names (covered_code): a SavedModel's graph or a .keras file's config, a builder's file,
each imported file, and the interpreter by its place (the resolved folder it is started
from). A launch then runs from what was compared (as_checked), never from the path text a
second time: the interpreter by that resolved place (tflaunch's own by its own path), the
SavedModel, the builder and imported files from private copies (private_copies.py).
"""

from __future__ import annotations

import os
import shutil
import sys

from ..probe.model.model_files import is_builder, model_format
from ..probe.model.user_code import is_file
from ..probe.outside_files import file_sha256, resolved, same_interpreter
from ..settings.config import LaunchConfig
from .model_code import model_code, model_fingerprint
from .private_copies import CODE_FILE_MOST, code_file_copy, saved_model_copy

# A private copy's path -> the spec it was made from: what a profile saved from such a run names.
ORIGINS: dict[str, str] = {}


def pinned_interpreter(python: str) -> str:
    """The interpreter as a path that no link can redirect later: tflaunch's own by
    sys.executable when it is that one, else its resolved folder and its own name (a venv
    is its folder: its python, a link to the base interpreter, is not followed)."""
    if same_interpreter(python, sys.executable):
        return sys.executable
    path = os.path.expanduser(python)
    if os.sep not in path:
        found = shutil.which(path)
        if found is None:
            return python  # not there: the launch check says so
        path = found
    return os.path.join(os.path.realpath(os.path.dirname(os.path.join(os.getcwd(), path))), os.path.basename(path))


def covered_code(config: LaunchConfig) -> list[str]:
    """The fingerprints a yes covers besides the profile's file; a file that cannot be read
    gives a value no acceptance matches."""
    parts = []
    if not same_interpreter(config.python, sys.executable):
        parts.append(f"python:{pinned_interpreter(config.python)}")
    if not config.is_program:
        if is_builder(config.model):
            parts.append(f"builder:{_file_hash(config.model.rpartition(':')[0])}")
        else:
            model = model_fingerprint(config.model)
            if model is not None:
                parts.append(model)
    parts += [f"import:{_file_hash(target)}" for target in config.imports if is_file(target)]
    return parts


def _file_hash(path: str) -> str:
    try:
        return file_sha256(os.path.expanduser(path), CODE_FILE_MOST, "The code file")
    except (OSError, ValueError):
        return "unreadable"


def as_checked(config: LaunchConfig) -> LaunchConfig:
    """The settings to launch: the interpreter pinned, the code a profile names copied
    where only this user can write. OSError (PrivateCopyError) when a copy cannot be made."""
    changes: dict[str, object] = {"python": pinned_interpreter(config.python)}
    if not config.is_program:
        model = config.model
        if is_builder(model):
            file, _, function = model.rpartition(":")
            if os.path.isfile(os.path.expanduser(file)):
                changes["model"] = _remember(f"{_copy_code(file)}:{function}", model)
        elif model_format(resolved(model)) == "savedmodel" and model_code(model):
            changes["model"] = _remember(saved_model_copy(model)[0], model)
    changes["imports"] = tuple(_remember(_copy_code(t), t) if is_file(t) and os.path.isfile(os.path.expanduser(t))
                               else t for t in config.imports)
    return config.replace(**changes)


def _copy_code(file: str) -> str:
    return code_file_copy(file)[0]


def _remember(copy: str, original: str) -> str:
    ORIGINS[copy] = original
    return copy


def as_written(config: LaunchConfig) -> LaunchConfig:
    """The settings with each private copy named by what it was copied from (for a profile
    saved from runs of a checked profile: the copies are gone when this process ends)."""
    if config.model not in ORIGINS and not any(t in ORIGINS for t in config.imports):
        return config
    return config.replace(model=ORIGINS.get(config.model, config.model),
                          imports=tuple(ORIGINS.get(t, t) for t in config.imports))
