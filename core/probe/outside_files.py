"""Files that come from outside: compared as the files they are, read as what they claim to be.

Two things a stranger's file can do to the program that reads it. A path can say one
thing as text and another to the kernel (`LINK/../../python` is not the python its text
names: the kernel follows LINK first), so trust compares files, never spellings. And a
"file" can be a FIFO that waits for ever, /dev/zero that never ends, or 20 MB where a
page was expected: every read of a file from outside is of a regular file, capped in
size, within a deadline. Standard library only: the probe checks model files with it in
the user's own interpreter.
"""

import errno
import hashlib
import os
import stat
import time
from typing import Optional

# What a kind of file is called in a message: "a FIFO" says more than "not a regular file".
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class UnreadableFileError(OSError):
    """A file from outside that is not read: not a regular file, too large, too slow, or
    a link out of the folder it belongs to. The message names the file and the cause."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EINVAL, message)

    def __str__(self) -> str:
        return str(self.strerror)


def resolved(path: str) -> str:
    """The path as the kernel reaches it: `~` expanded, every link and `..` followed."""
    return os.path.realpath(os.path.expanduser(path))


def same_file(a: str, b: str) -> bool:
    """Whether two paths reach the same file (device and inode, as exec and open see them);
    False when either cannot be reached. Text can differ for one file and agree for two."""
    try:
        first, second = os.stat(os.path.expanduser(a)), os.stat(os.path.expanduser(b))
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def same_interpreter(a: str, b: str) -> bool:
    """Whether two interpreter paths start the same Python: the same executable file in
    the same resolved folder. A virtual environment is its folder (Python looks for
    pyvenv.cfg beside the path it was started by, before following that link), and every
    venv's python is a link to one base interpreter, so the file alone does not say."""
    return same_file(a, b) and interpreter_folder(a) == interpreter_folder(b)


def interpreter_folder(path: str) -> str:
    """The folder an interpreter was started from, as Python looks for pyvenv.cfg beside it:
    with its executable file, what tells one interpreter (one environment) from another."""
    # Never abspath first: it folds LINK/.. as text, which is the very mistake.
    return os.path.realpath(os.path.dirname(os.path.join(os.getcwd(), os.path.expanduser(path))))


def file_kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def check_regular(path: str, what: str = "The file") -> os.stat_result:
    """The file's stat if it is a regular file (after links); UnreadableFileError saying what it is otherwise."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFileError(f"{what} {path} is {file_kind(info.st_mode)}, not a regular file; tflaunch reads "
                             "only regular files from outside. Point it at the file itself.")
    return info


def open_regular(path: str, what: str) -> "tuple[int, os.stat_result]":
    """A descriptor of the regular file at `path`, and its stat. Opened without blocking (a
    FIFO's open would wait for a writer), then checked on the descriptor, so the file
    checked is the file read."""
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnreadableFileError(f"{what} {path} is {file_kind(info.st_mode)}, not a regular file; tflaunch reads "
                                  "only regular files from outside.")
    return fd, info


def file_sha256(path: str, cap: int, what: str = "The file") -> str:
    """The SHA-256 of a regular file of at most `cap` bytes, read in chunks (not held whole)."""
    fd, info = open_regular(path, what)
    try:
        if info.st_size > cap:
            raise UnreadableFileError(f"{what} {path} is {info.st_size} bytes, more than the {cap} tflaunch reads.")
        hashed = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            hashed.update(chunk)
        return hashed.hexdigest()
    finally:
        os.close(fd)


def read_capped(path: str, cap: int, what: str = "The file", timeout: float = 10.0,
                within: Optional[str] = None) -> bytes:
    """The bytes of a regular file of at most `cap` bytes, read within `timeout` seconds.

    `within`: the folder the file belongs to; a link out of it is refused (a profile that is a
    link to another user's file).
    """
    if within is not None:
        inside = resolved(within)
        if os.path.commonpath([resolved(path), inside]) != inside:
            raise UnreadableFileError(f"{what} {path} is a link to {resolved(path)}, outside {within}; tflaunch "
                                      "reads only the files in that folder. Copy the file there instead.")
    fd, info = open_regular(path, what)
    try:
        if info.st_size > cap:
            raise UnreadableFileError(f"{what} {path} is {info.st_size} bytes; tflaunch reads at most {cap} bytes "
                                      "from such a file. Check that it is the right file.")
        deadline = time.monotonic() + timeout
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:  # it grew while read
                raise UnreadableFileError(f"{what} {path} grew past {cap} bytes while it was read; it is not read.")
            if time.monotonic() > deadline:
                raise UnreadableFileError(f"{what} {path} took more than {timeout:g} s to read; it is not read. "
                                      "Copy it to a local disk.")
        return b"".join(chunks)
    finally:
        os.close(fd)
