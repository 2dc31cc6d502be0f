"""The kernel's page cache, file by file: how much of a file is in memory (mincore), drop it
(posix_fadvise DONTNEED) or read it in (what `vmtouch -t` does). No root is needed for any.

No maintained Python library does this (vmtouch and fincore are C tools), so the two
system calls are made here through ctypes, on a mapping of the file that is never read:
mincore reports residency without faulting a page in. Linux only; elsewhere `supported()`
says no and nothing is touched.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import sys
from dataclasses import dataclass

from ...probe.outside_files import open_regular

PAGE = mmap.PAGESIZE
CHUNK = 1 << 30  # mapped and asked about a gigabyte at a time: the answer's vector stays small
_READ_BLOCK = 1 << 20
_MAP_FAILED = ctypes.c_void_p(-1).value


def supported() -> bool:
    """Whether this system can drop a file's pages and say what stays (Linux)."""
    return sys.platform.startswith("linux") and hasattr(os, "posix_fadvise")


_libc: ctypes.CDLL | None = None


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
        _libc = libc
    return _libc


@dataclass(frozen=True)
class Residency:
    """How much of one file the page cache holds."""

    size: int  # the file's bytes
    resident: int  # bytes of it in memory (whole pages, capped at the size)


def _open_regular(path: str) -> int:
    """A descriptor of the regular file at `path`; OSError for a FIFO or device, whose open
    or read would wait for ever."""
    return open_regular(path, "The file")[0]


def residency(path: str) -> Residency:
    """The file's bytes in the page cache now; OSError if it cannot be opened or mapped."""
    fd = _open_regular(path)
    try:
        size = os.fstat(fd).st_size
        return Residency(size, min(_resident_bytes(fd, size), size))
    finally:
        os.close(fd)


def _resident_bytes(fd: int, size: int) -> int:
    libc, resident = _c(), 0
    for offset in range(0, size, CHUNK):
        length = min(CHUNK, size - offset)
        address = libc.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, fd, offset)
        if address in (None, _MAP_FAILED):
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        try:
            pages = (length + PAGE - 1) // PAGE
            vector = (ctypes.c_ubyte * pages)()
            if libc.mincore(ctypes.c_void_p(address), length, vector) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err))
            resident += bytes(vector).count(1) * PAGE  # Linux sets bit 0 alone
        finally:
            libc.munmap(ctypes.c_void_p(address), length)
    return resident


def evict(path: str) -> None:
    """Ask the kernel to drop the file's clean pages. Dirty pages (written, not yet on disk)
    and pages another process maps stay: the kernel decides, and residency() says after."""
    fd = _open_regular(path)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def preload(path: str) -> int:
    """Read the whole file once so its pages are cached (vmtouch -t); the bytes read."""
    done = 0
    with os.fdopen(_open_regular(path), "rb", buffering=0) as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_WILLNEED)
        while chunk := f.read(_READ_BLOCK):
            done += len(chunk)
    return done
