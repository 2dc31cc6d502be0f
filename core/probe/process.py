"""This process as the OS sees it: its age, its memory, and its tie to the launcher."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from typing import Optional, Tuple

from .age import process_age as process_age  # re-exported: the probe's callers name it here

_PR_SET_PDEATHSIG = 1


def status_memory() -> Tuple[Optional[int], Optional[int]]:
    """(rss, peak_rss) of this process in bytes from /proc/self/status; (None, None) where it
    cannot be read. What a program's observer reads: it imports nothing into the program.

    Linux keeps ru_maxrss across execve, so it would report the peak of whatever forked
    the probe (a GUI holding hundreds of MiB); VmHWM belongs to this address space alone.
    """
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if line.startswith(("VmRSS", "VmHWM")))
        return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024
    except (OSError, ValueError, KeyError):
        return None, None


def memory() -> Tuple[Optional[int], Optional[int]]:
    """(rss, peak_rss) of the probe's own process in bytes, psutil's where /proc cannot be
    read; None where neither can."""
    rss, peak = status_memory()
    if rss is None:
        try:
            import psutil

            info = psutil.Process().memory_info()
            rss, peak = info.rss, getattr(info, "peak_wset", None)
        except Exception:
            pass
    return rss, peak


def io_counters() -> Optional[Tuple[int, int]]:
    """(read_bytes, rchar) of this process so far: bytes it had read from storage (page
    cache misses) and bytes its read calls returned, from wherever; None off Linux.

    This process alone: threads count, children do not (the probe starts none)."""
    try:
        with open("/proc/self/io") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["read_bytes"]), int(fields["rchar"])
    except (OSError, ValueError, KeyError):
        return None


def exit_with_parent(launcher: Optional[int] = None, poll_s: float = 0.5) -> None:
    """Die with the launcher (a kill -9 of the app): an orphaned probe serves nobody.

    On Linux the kernel does it (PR_SET_PDEATHSIG), even while the probe is busy in C
    code; elsewhere a thread polls for a new parent. The kernel only acts on a death
    after the request, so deaths before it are checked: one during the request (the
    parent changed), and, when the launcher's pid is known, one during the interpreter's
    start-up, before this ran at all (the launcher is gone).
    """
    parent = os.getppid()
    if launcher is not None and parent != launcher and _gone(launcher):
        os._exit(4)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the launcher died before prctl took effect
                os._exit(4)
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(4)

    threading.Thread(target=watch, name="tflaunch-parent-watch", daemon=True).start()


def _gone(pid: int) -> bool:
    """True when no process `pid` runs (a zombie is a dead launcher waiting for its reaper).

    The launcher is not our parent when the interpreter is a wrapper that did not exec
    (a shell script, conda run): then its pid merely being alive is all that is asked.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, someone else's (a pid reused) or not ours to signal
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return False
