"""Memory and termination of a process together with everything it started.

Model code may start helper processes; their memory is part of the cost of a start-up,
and cancelling a run must not leave them behind.
"""

from __future__ import annotations

import psutil


def _tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


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
