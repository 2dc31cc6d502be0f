"""One file of a shared sweep folder read as a boundary: a regular file only (a FIFO would
wait for ever, /dev/zero would fill memory), never through a link (one could point out of
the folder), at most `cap` bytes, within a deadline, and written by whom the ownership rule
allows (checked on the file as opened, not on a name that could be swapped meanwhile)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from .ownership import OwnershipError, refusal, writers_problem

CHUNK = 1 << 16
READ_TIMEOUT_S = 10.0  # a file on a network file system that answers slower than this is not waited for


class UnreadableFileError(Exception):
    """The file is not one tflaunch reads: the message names it and why."""


def read_bounded(path: Path, cap: int, shared_gid: int | None = None, group_owned_ok: bool = True,
                 timeout: float = READ_TIMEOUT_S, tail: bool = False) -> bytes:
    """The bytes of `path`; FileNotFoundError when it is absent, OwnershipError when someone
    else may have written it, UnreadableFileError for a link, a non-regular file, one over `cap`
    bytes (`tail`: its last `cap` bytes instead, for logs) or one slower than `timeout`."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        if os.path.islink(path):
            raise UnreadableFileError(f"{path}: a symbolic link (to {os.readlink(path)!r}); tflaunch writes none "
                                      "here and follows none out of a sweep folder. Remove it.") from None
        raise UnreadableFileError(f"{path}: cannot be opened ({exc.strerror}).") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFileError(f"{path}: not a regular file (a {_kind(st.st_mode)}); tflaunch writes only "
                                      "regular files here and reads nothing else. Remove it.")
        problem = writers_problem(st, shared_gid, group_owned_ok)
        if problem is not None:
            raise OwnershipError(refusal(path, problem))
        if st.st_size > cap and not tail:
            raise UnreadableFileError(f"{path}: {st.st_size} bytes, more than the {cap} tflaunch reads of such a "
                                      "file; it is not one tflaunch wrote. Remove it.")
        if tail and st.st_size > cap:
            os.lseek(fd, st.st_size - cap, os.SEEK_SET)
        return _read(fd, path, cap, timeout, tail)
    finally:
        os.close(fd)


def _read(fd: int, path: Path, cap: int, timeout: float, tail: bool) -> bytes:
    deadline = time.monotonic() + timeout
    os.set_blocking(fd, True)  # a regular file: O_NONBLOCK only kept a FIFO from blocking the open
    parts: list[bytes] = []
    size = 0
    while size <= cap:
        if time.monotonic() > deadline:
            raise UnreadableFileError(f"{path}: not read within {timeout:.0f} s; the shared folder's file system may "
                                 "be stalled. Try again later.")
        chunk = os.read(fd, min(CHUNK, cap + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if tail and size >= cap:  # a log still being written: what was there is enough
            return b"".join(parts)[:cap]
    raise UnreadableFileError(f"{path}: grew past the {cap} bytes tflaunch reads of such a file while it was read. "
                         "Remove it.")


def _kind(mode: int) -> str:
    for test, word in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "folder")):
        if test(mode):
            return word
    return "special file"
