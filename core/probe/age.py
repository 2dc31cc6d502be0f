"""How long ago the OS started this process: the zero of spawn, for the probe and the
launch hook alike. A module of its own, standard library only and light (no ctypes), since
the hook loads it into every program tflaunch measures before the program's first line."""

from __future__ import annotations

import os
import time
from typing import Optional


def process_age() -> Optional[float]:
    """Seconds since the OS started this process, or None where that cannot be read."""
    try:
        with open("/proc/self/stat") as f:
            stat = f.read()
        start_ticks = int(stat[stat.rindex(")") + 2 :].split()[19])
        # /proc/stat's btime has whole-second resolution; CLOCK_BOOTTIME avoids that error.
        return time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import psutil

        return time.time() - float(psutil.Process().create_time())
    except Exception:
        return None
