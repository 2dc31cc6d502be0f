"""The warm-start server: a process of the user's interpreter that has imported TensorFlow
and forks a child per launch, which runs the user's script as `python script.py` would.

    python .../probe/forkserver.py --socket PATH --idle SECONDS [--parent PID]

Started by tflaunch (core/run/warm_start.py) with the environment a cold child of the
same launch would get, minus the launch hook's tf.config settings: those are applied in
each child, because memory growth and limits must list the GPUs, which initialises CUDA,
and a process that has initialised CUDA cannot fork safely. Before every fork the server
checks that it is still safe: one thread besides OpenBLAS's idle pool (which OpenBLAS
itself makes fork-safe with pthread_atfork) and no GPU device open. When it is not, the
client is told why and starts the script cold.

Protocol (one Unix stream connection per launch): the client sends one JSON line
{"argv": [...], "cwd": "...", "env": {...}} with its stdin, stdout and stderr as
SCM_RIGHTS; the server answers {"pid": N} or {"refused": "why"}, then {"status": S} when
the child ends (S as os.waitpid's status). A client that goes away takes its child with it.
With --parent (the app), the server ends when that process has ended; it cannot use
PR_SET_PDEATHSIG, which follows the process that started it (a client that is gone when its
script ends), not the app.
Standard library only: it runs where tflaunch is not installed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

MAX_REQUEST = 4 << 20  # an environment and an argv: a few hundred kB at most
TICK_S = 0.2
STOP_GRACE_S = 2.0  # a stopped server's scripts get this long to end on SIGTERM


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


class Launch:
    """One client's connection and, once forked, its child."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buffer = b""
        self.fds: List[int] = []
        self.pid: Optional[int] = None


def _reply(conn: socket.socket, message: Dict[str, Any]) -> None:
    try:
        conn.sendall((json.dumps(message) + "\n").encode())
    except OSError:
        pass


def _load_child_module() -> Any:
    """warm_child.py beside this file, loaded by location before any fork (this folder is
    not on sys.path: its module names would shadow the user's)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warm_child.py")
    spec = importlib.util.spec_from_file_location("tflaunch_warm_child", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Server:
    def __init__(self, path: str, idle_s: float, parent: Optional[int], imported: Imported) -> None:
        self.path, self.idle_s, self.parent = path, idle_s, parent
        self.imported = imported
        self.selector = selectors.DefaultSelector()
        self.launches: Dict[socket.socket, Launch] = {}
        self.children: Dict[int, Launch] = {}
        self.last_active = time.monotonic()
        self.allowed_threads = 0
        self.listener: Optional[socket.socket] = None
        self.unsafe: Optional[str] = None
        self.served = 0
        self.pidfds: Dict[int, int] = {}  # pidfd -> the child it watches
        self.child_module = _load_child_module()
        # Top-level modules imported here from files (a script's folder could shadow them).
        self.loaded = {name for name, module in list(sys.modules.items())
                       if "." not in name and getattr(module, "__file__", None)}

    def start(self) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o600)
        self.listener.listen(16)
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.allowed_threads = blas_pool_threads()

    def serve(self) -> None:
        assert self.listener is not None
        while True:
            for key, _ in self.selector.select(TICK_S):
                if key.fileobj is self.listener:
                    self._accept()
                elif isinstance(key.fileobj, int) and key.fileobj in self.pidfds:
                    self._unwatch(key.fileobj)  # a child ended: reaped just below
                else:
                    self._read(key.fileobj)  # type: ignore[arg-type]
            self._reap()
            if self.unsafe and not self.children:
                return
            if self.children:
                self.last_active = time.monotonic()
            elif time.monotonic() - self.last_active > self.idle_s:
                return
            if self.parent and not _alive(self.parent):
                return

    def _accept(self) -> None:
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        # Whoever connects has code run as this user: only this user may. The folder's
        # mode says the same, but a folder's mode can be loosened; the kernel's word cannot.
        pid, uid, _gid = peer_credentials(conn)
        if uid != os.getuid():
            sys.stderr.write(f"tflaunch warm server: refused a connection from uid {uid} (pid {pid}): "
                             f"only uid {os.getuid()} may launch here\n")
            sys.stderr.flush()
            conn.close()
            return
        conn.setblocking(True)
        self.launches[conn] = Launch(conn)
        self.selector.register(conn, selectors.EVENT_READ)

    def _read(self, conn: socket.socket) -> None:
        launch = self.launches[conn]
        try:
            data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 8)
        except OSError:
            data, fds = b"", []
        launch.fds += fds
        if not data:  # the client is gone: so goes its child
            self._drop(launch, kill=True)
            return
        if launch.pid is not None:
            return  # nothing more is expected once the child runs
        launch.buffer += data
        if b"\n" not in launch.buffer:
            if len(launch.buffer) > MAX_REQUEST:
                _reply(conn, {"refused": "the launch request is too large"})
                self._drop(launch)
            return
        try:
            request = json.loads(launch.buffer.split(b"\n", 1)[0])
            if isinstance(request, dict) and request.get("query") == "state":
                _reply(conn, self.state())
                self._drop(launch)
                return
            closed = request.get("closed") or []
            if not isinstance(request.get("argv"), list) or not request["argv"] or not isinstance(closed, list) \
                    or len(launch.fds) < 3 - len(set(closed) & {0, 1, 2}) or not isinstance(request.get("env"), dict):
                raise ValueError("argv, env and the open stdio descriptors are needed")
        except (ValueError, AttributeError) as exc:
            _reply(conn, {"refused": f"a malformed launch request ({exc})"})
            self._drop(launch)
            return
        refusal = self._refusal(request)
        if refusal:
            _reply(conn, refusal)
            self._drop(launch)
            return
        self.last_active = time.monotonic()
        self.served += 1
        pid = os.fork()
        if pid == 0:
            for fd in self.pidfds:  # the siblings' exit watches are not the script's descriptors
                os.close(fd)
            self.selector.close()
            if self.listener is not None:
                self.listener.close()
            for other in self.launches:
                if other is not conn:
                    other.close()
            conn.close()
            self.child_module.run_child(request, launch.fds, self.imported)
        launch.pid = pid
        self.children[pid] = launch
        self._watch_exit(pid)
        for fd in launch.fds:
            os.close(fd)
        launch.fds = []
        _reply(conn, {"pid": pid})

    def _watch_exit(self, pid: int) -> None:
        """A pidfd that wakes the loop the moment the child ends: without it the end is
        noticed on the next tick (TICK_S), which every warm launch paid."""
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is None:
            return
        try:
            fd = pidfd_open(pid)
        except OSError:
            return
        self.pidfds[fd] = pid
        self.selector.register(fd, selectors.EVENT_READ)

    def _refusal(self, request: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """Why this server must not run this launch, as the answer to the client; None if it may."""
        # The variables this server's import read differ: its TensorFlow is not the one a
        # cold start would import. The client asks a server keyed on them too.
        env = request["env"]
        differ = sorted(n for n in self.imported.read if env.get(n) != self.imported.env.get(n))
        if differ:
            return {"refused": f"the warm server imported TensorFlow with other values of {', '.join(differ)}",
                    "rekey": differ}
        shadowed = shadowed_modules(request, self.loaded)
        if shadowed:
            return {"refused": f"the script's folder has {shadowed[0]}, which a cold start would import instead of "
                               f"the module of that name the warm server has imported"}
        lower = priority_out_of_reach(request)
        if lower:
            return {"refused": f"the launch's {lower} is below the warm server's, which only a privileged "
                               "process can lower; a cold start keeps it"}
        too_high = limits_out_of_reach(request.get("limits") or {})
        if too_high:
            return {"refused": f"the launch's resource limit {too_high} is above the warm server's hard limit, "
                               "which only a new process can have"}
        why = why_unsafe(self.allowed_threads)
        if why:
            # Threads and CUDA do not go away: this server can never fork again, so it ends
            # once its children have, and the next launch starts a fresh one.
            self.unsafe = why
            return {"refused": why}
        return None

    def _unwatch(self, fd: int) -> None:
        self.selector.unregister(fd)
        del self.pidfds[fd]
        os.close(fd)

    def state(self) -> Dict[str, Any]:
        """What `tflaunch warm status` and the server cap need: idle time and children."""
        idle = 0.0 if self.children else time.monotonic() - self.last_active
        return {"pid": os.getpid(), "idle_s": round(idle, 1), "running": len(self.children), "served": self.served,
                "idle_limit_s": self.idle_s}

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            launch = self.children.pop(pid, None)
            if launch is not None:
                _reply(launch.conn, {"status": status})
                launch.pid = None
                self._drop(launch)

    def _drop(self, launch: Launch, kill: bool = False) -> None:
        if kill and launch.pid is not None:
            try:
                os.killpg(launch.pid, signal.SIGKILL)
            except OSError:
                pass
        for fd in launch.fds:
            os.close(fd)
        launch.fds = []
        if launch.conn in self.launches:
            self.selector.unregister(launch.conn)
            del self.launches[launch.conn]
            launch.conn.close()

    def close(self, why: str = "") -> None:
        """Stop: each running script is told why, ended (its group: TERM, then KILL after
        STOP_GRACE_S) and its status sent, so no client is left without an answer."""
        # No new launch while the running ones end: the next one starts a new server.
        try:
            os.unlink(self.path)
        except OSError:
            pass
        if self.listener is not None:
            self.selector.unregister(self.listener)
            self.listener.close()
            self.listener = None
        for launch in [launch for launch in self.launches.values() if launch.pid is None]:
            _reply(launch.conn, {"refused": why or "the warm server ended", "retry": True})
            self._drop(launch)
        if self.children:
            for pid, launch in self.children.items():
                _reply(launch.conn, {"server_stopped": why or "the warm server ended"})
                try:
                    os.killpg(pid, signal.SIGTERM)
                except OSError:
                    pass
            deadline = time.monotonic() + STOP_GRACE_S
            while self.children and time.monotonic() < deadline:
                self._reap()
                time.sleep(0.05)
            for pid in list(self.children):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            deadline = time.monotonic() + STOP_GRACE_S
            while self.children and time.monotonic() < deadline:
                self._reap()
                time.sleep(0.05)
        for launch in list(self.launches.values()):
            self._drop(launch, kill=True)


def peer_credentials(conn: socket.socket) -> Tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a Unix socket, from the kernel."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    return pid, uid, gid


def shadowed_modules(request: Dict[str, Any], loaded: set[str]) -> List[str]:
    """Files or packages in the folder a cold start puts first on sys.path (the script's,
    or the working folder for -m and -c) named as a module the server imported: cold, the
    script would import its own; here it would get the server's."""
    argv, cwd = request["argv"], str(request.get("cwd") or "/")
    if sys.flags.safe_path:
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Imported:
    """What this server's import saw: its environment then, the variables Python code read
    during the import (a launch differing in one of them needs another server), versions."""

    def __init__(self, env: Dict[str, str], read: List[str], tensorflow: str, keras: str) -> None:
        self.env, self.read, self.tensorflow, self.keras = env, read, tensorflow, keras


class _StoppedError(Exception):
    pass


def _preload() -> Imported:
    """What a script's first lines import, done once here: TensorFlow, and Keras when
    installed (Keras 3 is imported by a script itself, not by TensorFlow). The variables
    read through os.environ meanwhile are recorded by swapping its class for the import's
    length (measured: a few dozen names, KERAS_BACKEND and TF_USE_LEGACY_KERAS among them)."""
    env = dict(os.environ)
    read = set()
    environ_class: Any = type(os.environ)

    class Recording(environ_class):  # type: ignore[misc]
        def __getitem__(self, key: Any) -> Any:
            read.add(key.decode() if isinstance(key, bytes) else key)
            return super().__getitem__(key)

        def __contains__(self, key: Any) -> bool:
            read.add(key.decode() if isinstance(key, bytes) else key)
            return bool(super().__contains__(key))

        def __iter__(self) -> Any:
            read.add("*")  # the whole environment was looked at: every variable counts
            return super().__iter__()

    os.environ.__class__ = Recording
    os.environb.__class__ = Recording
    try:
        import tensorflow as tf

        try:
            import keras

            keras_version = getattr(keras, "__version__", "")
        except ImportError:
            keras_version = ""
    finally:
        os.environ.__class__ = environ_class
        os.environb.__class__ = environ_class
    names = sorted(env) if "*" in read else sorted(n for n in read if isinstance(n, str))
    return Imported(env, names, tf.__version__, keras_version)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="tflaunch-forkserver")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--idle", type=float, default=600.0)
    parser.add_argument("--parent", type=int, default=0)
    args = parser.parse_args(argv)
    if args.parent and not _alive(args.parent):
        return  # the app that wanted it is already gone
    # The client that started this server held its signals while it launched; a mask is
    # inherited, and a server deaf to SIGTERM could not be stopped.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])

    def stop(*_: Any) -> None:
        raise _StoppedError()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl+C is for the client's child
    started = time.perf_counter()
    imported = _preload()
    server = Server(args.socket, args.idle, args.parent or None, imported)
    try:
        server.start()
    except OSError as exc:
        print(json.dumps({"error": f"cannot listen on {args.socket}: {exc}"}), flush=True)
        return
    print(json.dumps({"ready": True, "pid": os.getpid(), "tensorflow": imported.tensorflow, "keras": imported.keras,
                      "import_s": time.perf_counter() - started, "threads": 1 + server.allowed_threads,
                      "read": imported.read}), flush=True)
    why = ""
    try:
        server.serve()
    except _StoppedError:
        why = "the warm server was stopped (tflaunch warm stop, or the cap on warm servers)"
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second TERM must not cut the tidying short
        server.close(why)
        sys.stderr.flush()
        # Nothing is left to tidy: an interpreter shutdown with TensorFlow loaded took ~3 s.
        os._exit(0)


if __name__ == "__main__":
    # Run by path: this folder is sys.path[0], where its module names would shadow the
    # user's own (a script's `import channel`); take it off, as the probe does.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    main()
