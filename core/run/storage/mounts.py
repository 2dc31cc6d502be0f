"""Which file system a path is on (/proc/self/mountinfo), and what that means for its pages.

A file on a memory file system (tmpfs) is its pages: it cannot be evicted, so a cold
start there is a warm one. A file on a network file system is read over the network on
every cold start: copying it to a local disk first is a remedy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MOUNTINFO = "/proc/self/mountinfo"
# Files that live in memory: posix_fadvise(DONTNEED) cannot drop what has nowhere else to be.
MEMORY_FS = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs", "proc", "sysfs"})
NETWORK_FS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "fuse.sshfs", "lustre", "gpfs", "ceph",
                        "fuse.ceph", "fuse.ceph-fuse", "glusterfs", "fuse.glusterfs", "beegfs", "9p",
                        "fuse.s3fs", "fuse.gcsfuse", "fuse.rclone", "afs", "panfs"})


@dataclass(frozen=True)
class Mount:
    point: str
    fstype: str
    source: str
    read_only: bool

    @property
    def in_memory(self) -> bool:
        return self.fstype in MEMORY_FS

    @property
    def network(self) -> bool:
        return self.fstype in NETWORK_FS

    def describe(self) -> str:
        return f"{self.fstype} at {self.point}" + (" (read-only)" if self.read_only else "")


def _unescape(field: str) -> str:
    # mountinfo writes a space, tab, newline and backslash in a path as octal escapes.
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def parse_mountinfo(text: str) -> list[Mount]:
    """The mounts listed in a mountinfo text (proc(5)); lines that do not parse are skipped."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 6 or len(tail) < 2:
            continue
        options = set(fields[5].split(",")) | set(tail[2].split(",") if len(tail) > 2 else [])
        mounts.append(Mount(_unescape(fields[4]), tail[0], _unescape(tail[1]), "ro" in options))
    return mounts


def mount_of(path: str, mountinfo: str | None = None) -> Mount | None:
    """The mount that holds `path` (the longest mount point above its real path; the last
    listed wins where several are stacked); None where mountinfo cannot be read."""
    if mountinfo is None:
        try:
            with open(MOUNTINFO) as f:
                mountinfo = f.read()
        except OSError:
            return None
    real = os.path.realpath(path)
    best: Mount | None = None
    for mount in parse_mountinfo(mountinfo):
        point = mount.point.rstrip("/") or "/"
        if real == point or real.startswith(point + "/") or point == "/":
            if best is None or len(point) >= len(best.point.rstrip("/") or "/"):
                best = mount
    return best
