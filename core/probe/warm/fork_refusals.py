"""Why a warm server must not fork a launch: checks of the server process (threads, CUDA)
and of each request (its peer, the launcher's limits and priority, a script folder that
would shadow a module the server imported). Loaded by location beside forkserver.py.
Standard library only: it runs in the user's interpreter, where tflaunch may be absent.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import sys
from typing import Any, Dict, List, Optional, Set, Tuple


def blas_pool_threads() -> int:
    """Threads of OpenBLAS's pool in this process (its own count minus the caller)."""
    try:
        with open("/proc/self/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and "/" in line})
    except OSError:
        return 0
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
            query = getattr(lib, name, None)
            if query is not None:
                return max(int(query()) - 1, 0)
    return 0


def gpu_devices_open() -> List[str]:
    """NVIDIA device files this process has open: CUDA was initialised here."""
    out = []
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith("/dev/nvidia"):
                out.append(target)
    except OSError:
        pass
    return out


def why_unsafe(allowed_threads: int) -> Optional[str]:
    """Why forking now could hand the child a broken process; None when it is safe."""
    import threading

    if threading.active_count() > 1:
        names = ", ".join(t.name for t in threading.enumerate() if t is not threading.main_thread())
        return f"the warm server runs Python threads ({names}); a forked child would inherit their locks"
    try:
        tasks = len(os.listdir("/proc/self/task"))
    except OSError:
        return None
    if tasks > 1 + allowed_threads:
        return (f"the warm server has {tasks} threads ({1 + allowed_threads} expected: the main thread and "
                "OpenBLAS's pool); a library started threads at import, and a forked child would inherit their locks")
    devices = gpu_devices_open()
    if devices:
        return f"the warm server has initialised CUDA ({', '.join(sorted(set(devices)))} open); CUDA cannot fork"
    return None


def peer_credentials(conn: socket.socket) -> Tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a Unix socket, from the kernel."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    return pid, uid, gid


def shadowed_modules(request: Dict[str, Any], loaded: Set[str]) -> List[str]:
    """Files or packages in the folder a cold start puts first on sys.path (the script's,
    or the working folder for -m and -c) named as a module the server imported: cold, the
    script would import its own; here it would get the server's."""
    argv, cwd = request["argv"], str(request.get("cwd") or "/")
    if getattr(sys.flags, "safe_path", False):  # -P (Python 3.11+); 3.8 has no such flag
        return []
    if argv[0] in ("-m", "-c"):
        folder = cwd
    else:
        folder = os.path.dirname(os.path.realpath(os.path.join(cwd, str(argv[0]))))
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    out = []
    for entry in names:
        stem = entry.split(".", 1)[0] if entry.endswith((".py", ".so", ".pyc")) else entry
        if stem in loaded and (entry != stem or os.path.isdir(os.path.join(folder, entry))):
            module = sys.modules.get(stem)
            origin = os.path.realpath(getattr(module, "__file__", "") or "")
            if not origin.startswith(os.path.realpath(folder) + os.sep):
                out.append(os.path.join(folder, entry))
    return sorted(out)


def priority_out_of_reach(request: Dict[str, Any]) -> Optional[str]:
    """What of the launcher's niceness and OOM score a child of this server could not get
    (an unprivileged process may only raise them), in words; None if it can get both."""
    if os.geteuid() == 0:
        return None
    nice = request.get("nice")
    if isinstance(nice, int) and nice < os.getpriority(os.PRIO_PROCESS, 0):
        return f"niceness ({nice})"
    oom = request.get("oom_score_adj")
    try:
        with open("/proc/self/oom_score_adj") as f:
            own = int(f.read().strip() or 0)
    except (OSError, ValueError):
        return None
    if isinstance(oom, int) and oom < own:
        return f"OOM score adjustment ({oom})"
    return None


def limits_out_of_reach(limits: Dict[str, Any]) -> Optional[str]:
    """The first resource limit a child of this server could not be given (a hard limit
    above this process's own: raising one needs privilege), as RLIMIT_NAME; None if all can."""
    import resource

    for name, pair in limits.items():
        number = getattr(resource, str(name), None)
        if not isinstance(number, int) or not isinstance(pair, list) or len(pair) != 2:
            continue
        hard = resource.getrlimit(number)[1]
        wanted = int(pair[1])
        if hard != resource.RLIM_INFINITY and (wanted == resource.RLIM_INFINITY or wanted > hard) \
                and os.geteuid() != 0:
            return str(name)
    return None
