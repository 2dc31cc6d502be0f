"""Memory and termination of a process together with everything it started.

Model code may start helper processes; their memory is part of the cost of a start-up,
and cancelling a run must not leave them behind.
"""

from __future__ import annotations

import os
import secrets
import signal
from collections.abc import Callable

import psutil

Apart = Callable[[psutil.Process], bool]  # a descendant that is not the run's, with all below it

# Every run's child gets this variable, with a value of its own, and passes it on to all it
# starts. A helper that left the process group (setsid) and outlived its parent (a double
# fork) is no longer anyone's descendant; its environment still says whose it is.
RUN_MARKER_ENV = "TFLAUNCH_RUN"


def _tree(pid: int, apart: Apart | None = None) -> list[psutil.Process]:
    root = psutil.Process(pid)
    if apart is None:
        return [root, *root.children(recursive=True)]
    tree, level = [root], [root]
    while level:
        below = []
        for proc in level:
            try:
                below += [child for child in proc.children() if not apart(child)]
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        tree += below
        level = below
    return tree


def tree_rss(pid: int) -> int | None:
    """Summed resident memory of the process and its descendants in bytes; None once gone.

    Pages shared between processes count once per process, as in `top`; for one probe
    and no helpers this is exactly its RSS.
    """
    try:
        procs = _tree(pid)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    total = 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return total


class TreeSampler:
    """Samples a process tree's RSS at a fraction of `tree_rss`'s cost.

    Listing descendants scans every process on the machine; the probe rarely starts
    helpers, so the tree is re-listed once per `relist_s` and the known processes are
    read in between. On a 2-core machine this keeps a 10–20 Hz sampler from slowing
    the start-up it measures.
    """

    def __init__(self, pid: int, relist_s: float = 1.0, apart: Apart | None = None) -> None:
        """`apart`: a descendant that is not the run's (a warm server this launch started,
        whose import is its own), left out with everything below it."""
        self.pid = pid
        self._relist_s = relist_s
        self._apart = apart
        self._procs: list[psutil.Process] = []
        self._listed_at = float("-inf")
        self._also: list[int] = []  # roots of other trees that belong to this run

    def add_root(self, pid: int) -> None:
        """Sample `pid`'s tree too: a warm-started script is the warm server's child, not
        its launcher's."""
        self._also.append(pid)
        self._listed_at = float("-inf")

    def pids(self) -> list[int]:
        """The processes of the tree as last listed."""
        return [p.pid for p in self._procs] or [self.pid]

    def rss(self, now: float) -> int | None:
        """RSS of the tree in bytes at monotonic time `now`; None once the root is gone."""
        if now - self._listed_at >= self._relist_s or not self._procs:
            try:
                self._procs = _tree(self.pid, self._apart)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                return None
            for root in self._also:
                try:
                    self._procs += _tree(root)
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    continue
            self._listed_at = now
        total, root_alive = 0, False
        for proc in self._procs:
            try:
                total += proc.memory_info().rss
                root_alive = root_alive or proc.pid == self.pid
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        # An exiting process has already released its pages: 0 is its death, not a sample.
        return total if root_alive and total > 0 else None


def end_group(pid: int, *, tree: bool = True) -> None:
    """SIGKILL the child's process group (it leads one: process_group=0) and, with
    `tree`, every descendant that left the group; quiet if gone. Pass tree=False once
    the child is reaped: its pid may then belong to a stranger."""
    if pid <= 1:  # never a group we did not make: 0 is our own, 1 is init's
        return
    if tree:
        kill_tree(pid)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_tree(pid: int) -> None:
    """SIGKILL the process and all its descendants; quiet if they are already gone."""
    try:
        # Children are listed before the parent dies: orphans are re-parented and lost.
        procs = _tree(pid)
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return
    for proc in procs:
        try:
            proc.kill()
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue


def run_marker() -> str:
    """A value for RUN_MARKER_ENV that no other run (of any launcher) shares."""
    return f"{os.getpid()}-{secrets.token_hex(8)}"


def end_leftovers(marker: str) -> list[int]:
    """SIGKILL every process of ours still carrying `marker`: what a finished run left.

    Why not the alternatives: listing descendants misses an orphan (it was re-parented to
    init), a process group misses one that called setsid, and making the launcher a child
    subreaper would also adopt what the app starts for other reasons (an opened browser)
    and leave zombies for Qt's process reaper to ignore. Scanning costs a few milliseconds
    once per run; a helper that clears its environment escapes it, deliberately so.
    """
    killed: list[int] = []
    for _ in range(3):  # a leftover may fork while the first pass kills
        found = [pid for pid in _carrying(f"{RUN_MARKER_ENV}={marker}") if pid not in killed]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except (ProcessLookupError, PermissionError):
                continue
    return killed


def carrying_marker(marker: str) -> list[int]:
    """Pids of our own processes that carry this run's marker."""
    return _carrying(f"{RUN_MARKER_ENV}={marker}")


def _carrying(entry: str) -> list[int]:
    """Pids of our own processes whose environment has `entry` (NAME=value)."""
    me = os.getpid()
    if os.path.exists("/proc/self/environ"):  # Linux: /proc directly, ten times psutil's speed
        needle, out = b"\0" + entry.encode() + b"\0", []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == me:
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    if needle in b"\0" + f.read() + b"\0":
                        out.append(int(name))
            except OSError:  # gone, or not ours to read
                continue
        return out
    name, _, value = entry.partition("=")
    out = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != me and proc.environ().get(name) == value:
                out.append(proc.pid)
        except psutil.Error:
            continue
    return out
