"""Why a file's pages stayed in memory after tflaunch asked the kernel to drop them.

The kernel keeps a page that a process maps (a running TensorFlow maps its own shared
libraries, a warm server maps all of them) and a dirty page (written, not yet on disk:
tflaunch never fsyncs a user's file, so it stays until the kernel writes it back).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

# The kernel writes dirty pages back after dirty_expire_centisecs (30 s by default); a file
# changed more recently than this may still hold some.
RECENT_WRITE_S = 60.0


def mapped_by_others(paths: Iterable[str], proc: str = "/proc") -> dict[str, list[tuple[int, str]]]:
    """{path: [(pid, command name)]} for each of `paths` mapped by another process whose maps
    this user may read (others' processes are not readable without root: not seen)."""
    wanted = {os.path.realpath(p): p for p in paths}
    found: dict[str, list[tuple[int, str]]] = {}
    if not wanted:
        return found
    me = os.getpid()
    try:
        pids = [int(name) for name in os.listdir(proc) if name.isdigit() and int(name) != me]
    except OSError:
        return found
    for pid in pids:
        try:
            with open(f"{proc}/{pid}/maps") as f:
                mapped = {line.split(None, 5)[5].strip() for line in f if line.count(" ") >= 5 and "/" in line}
            with open(f"{proc}/{pid}/comm") as f:
                name = f.read().strip()
        except (OSError, IndexError, ValueError):
            continue
        for real in mapped & wanted.keys():
            found.setdefault(wanted[real], []).append((pid, name))
    return found


def recently_written(path: str, now: float | None = None) -> float | None:
    """Seconds since the file was last written, if that is recent enough for dirty pages."""
    try:
        age = (now or time.time()) - os.stat(path).st_mtime
    except OSError:
        return None
    return age if 0 <= age < RECENT_WRITE_S else None


def stay_reasons(kept: dict[str, int], level: str) -> list[str]:
    """A sentence per cause for the files of `level` that kept pages ({path: bytes kept})."""
    from ...units import format_bytes

    if not kept:
        return []
    reasons = []
    holders = mapped_by_others(kept)
    if holders:
        pids = sorted({holder for hs in holders.values() for holder in hs})
        named = ", ".join(f"{name} (pid {pid})" for pid, name in pids[:4]) + (" …" if len(pids) > 4 else "")
        size = sum(kept[p] for p in holders)
        reasons.append(f"{format_bytes(size)} of the {level} files stayed in memory because other processes map "
                       f"them: {named}. The kernel keeps pages in use; end those processes for a colder start.")
    dirty = {p: age for p in kept if p not in holders and (age := recently_written(p)) is not None}
    if dirty:
        size = sum(kept[p] for p in dirty)
        newest = min(dirty.values())
        reasons.append(f"{format_bytes(size)} of the {level} files stayed in memory: they were written "
                       f"{newest:.0f} s ago and are probably not on disk yet (dirty pages stay until the kernel "
                       "writes them back; tflaunch never fsyncs your files). Wait a minute or run `sync`.")
    rest = {p: size for p, size in kept.items() if p not in holders and p not in dirty}
    if rest:
        size = sum(rest.values())
        reasons.append(f"{format_bytes(size)} of the {level} files stayed in memory for reasons tflaunch cannot "
                       "see (mapped by another user's process, or locked).")
    return reasons
