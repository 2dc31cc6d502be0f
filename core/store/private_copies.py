"""Private copies of the code a profile names, so that what runs is what was checked.

A yes covers a SavedModel's graph or a builder's file by its SHA-256, but the model is
loaded seconds later, by path: whoever can write the folder could swap the graph in
between (issue 43: saved_model.pb swapped during the import ran a graph that read
/etc/hostname). So a launch loads from a copy in a folder only this user can write
(cache/checked, 0700, never through a link): the files that are code are copied, and
the acceptance is compared with the copy's hash, never the original's.

- A SavedModel: its top-level files (saved_model.pb, keras_metadata.pb: the graph and
  Keras's layer configs) are copied; the files under its subfolders (variables, assets:
  data) are links to where they were when copied, so a model of gigabytes costs nothing.
- A builder or an imported file (`net.py:build`, `--import layers.py`): the file is
  copied, and every other entry of its folder is a link, so its own sibling imports work
  as from its folder.

Each process's copies are removed at its exit; those of a process that died are removed by
the next one.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from ..paths import cache_dir
from ..probe.outside_files import open_regular
from ..safe_text import shown

GRAPH_MOST = 2 << 30  # as model_code's cap on saved_model.pb
CODE_FILE_MOST = 64 << 20  # a .py file
MOST_ENTRIES = 10_000  # links made in one copy: a SavedModel is a handful of files


class PrivateCopyError(OSError):
    """A copy could not be made; the message says which file, why, and what to do."""


def private_root() -> Path:
    """tflaunch's own folder for the copies: made 0700; refused when it is a link, another
    user's or open to others (then a copy there would be no safer than the original)."""
    root = cache_dir() / "checked"
    root.parent.mkdir(parents=True, exist_ok=True)
    try:
        root.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PrivateCopyError(f"{root} must be a folder of yours that only you can use (mode 0700, not a link); "
                               "tflaunch keeps checked copies of models there. Remove it, and it is made again.")
    return root


def _remove_dead_copies(root: Path) -> None:
    """A copy folder is named by the pid that made it: one whose process has ended is gone."""
    import psutil  # here, not for the window's first frame, which only imports this module

    for folder in root.iterdir():
        pid = folder.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


_MADE: list[str] = []


def _remove_mine() -> None:
    for folder in _MADE:
        shutil.rmtree(folder, ignore_errors=True)


def _new_folder() -> str:
    root = private_root()
    if not _MADE:
        _remove_dead_copies(root)
        atexit.register(_remove_mine)
    folder = tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root)
    _MADE.append(folder)
    return folder


def copy_file(source: str, target: str, cap: int, what: str) -> str:
    """Copy the regular file `source` (opened once, checked on the descriptor) to `target`,
    which must not exist; the SHA-256 of the bytes written."""
    fd, info = open_regular(source, what)
    hashed = hashlib.sha256()
    try:
        if info.st_size > cap:
            raise PrivateCopyError(f"{what} {shown(source)} is {info.st_size} bytes, more than the {cap} tflaunch "
                                   "copies to check it.")
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(out, "wb") as f:
            size = 0
            while chunk := os.read(fd, 1 << 20):
                size += len(chunk)
                if size > cap:  # it grew while copied
                    raise PrivateCopyError(f"{what} {shown(source)} grew past {cap} bytes while it was copied.")
                hashed.update(chunk)
                f.write(chunk)
    finally:
        os.close(fd)
    return hashed.hexdigest()


def saved_model_copy(folder: str) -> tuple[str, str]:
    """(the copy's path, the SHA-256 of its saved_model.pb) of the SavedModel `folder`."""
    source = os.path.realpath(os.path.expanduser(folder))
    target = os.path.join(_new_folder(), os.path.basename(source.rstrip(os.sep)) or "model")
    os.mkdir(target, 0o700)
    graph = None
    made = 0
    for name in sorted(os.listdir(source)):
        path, inside = os.path.join(source, name), os.path.join(target, name)
        if os.path.isdir(path):
            made += _link_tree(path, inside, MOST_ENTRIES - made)
        else:
            digest = copy_file(path, inside, GRAPH_MOST, "The SavedModel file")
            graph = digest if name == "saved_model.pb" else graph
    if graph is None:
        raise PrivateCopyError(f"The SavedModel {shown(folder)} has no saved_model.pb; it cannot be loaded.")
    return target, graph


def _link_tree(source: str, target: str, room: int) -> int:
    """Folders made, files linked (to where each is now); the number of links made."""
    os.mkdir(target, 0o700)
    made = 0
    for name in sorted(os.listdir(source)):
        if made >= room:
            raise PrivateCopyError(f"{shown(source)} holds more than {MOST_ENTRIES} files; a SavedModel is a handful.")
        path = os.path.join(source, name)
        if os.path.isdir(path) and not os.path.islink(path):
            made += _link_tree(path, os.path.join(target, name), room - made)
        else:
            os.symlink(os.path.realpath(path), os.path.join(target, name))
            made += 1
    return made


def code_file_copy(file: str) -> tuple[str, str]:
    """(the copy's path, its SHA-256) of the .py file `file`, beside links to its siblings."""
    source = os.path.realpath(os.path.expanduser(file))
    home = os.path.dirname(source)
    target = _new_folder()
    digest = copy_file(source, os.path.join(target, os.path.basename(source)), CODE_FILE_MOST, "The code file")
    for count, name in enumerate(sorted(os.listdir(home))):
        if count > MOST_ENTRIES:
            break
        # Not its __pycache__: a .pyc planted there with the copy's size and time would run
        # instead of the copy (Python checks no more than those two).
        if name not in (os.path.basename(source), "__pycache__"):
            os.symlink(os.path.join(home, name), os.path.join(target, name))
    return os.path.join(target, os.path.basename(source)), digest
