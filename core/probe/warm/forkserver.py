"""The warm-start server: a process of the user's interpreter that has imported TensorFlow
and forks a child per launch, which runs the user's script as `python script.py` would.

    python .../probe/warm/forkserver.py --socket PATH --idle SECONDS [--parent PID]

Started by tflaunch (core/run/warm/warm_start.py) with the environment a cold child of the
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
import array
import json
import os
import selectors
import signal
import socket
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

MAX_REQUEST = 4 << 20  # an environment and an argv: a few hundred kB at most
TICK_S = 0.2
STOP_GRACE_S = 2.0  # a stopped server's scripts get this long to end on SIGTERM


def receive_fds(sock: socket.socket, size: int, most: int) -> Tuple[bytes, List[int]]:
    """Up to `size` bytes and up to `most` descriptors passed with them (SCM_RIGHTS).

    socket.recv_fds does this from Python 3.9; the server runs in the user's interpreter,
    which may be 3.8, so this is the standard library's own recv_fds, written out."""
    fds = array.array("i")
    data, ancillary, _flags, _addr = sock.recvmsg(size, socket.CMSG_LEN(most * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    return data, list(fds)


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


def _load_sibling(name: str) -> Any:
    """A module beside this file, loaded by location before any fork (this folder is not on
    sys.path: its module names would shadow the user's)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"tflaunch_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module



# Why not to fork (threads, CUDA, a stranger's connection...), in a module of its own.
_CHECKS = _load_sibling("fork_refusals")

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
        self.child_module = _load_sibling("warm_child")
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
        self.allowed_threads = _CHECKS.blas_pool_threads()

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
        pid, uid, _gid = _CHECKS.peer_credentials(conn)
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
            data, fds = receive_fds(conn, 1 << 16, 8)
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
        shadowed = _CHECKS.shadowed_modules(request, self.loaded)
        if shadowed:
            return {"refused": f"the script's folder has {shadowed[0]}, which a cold start would import instead of "
                               f"the module of that name the warm server has imported"}
        lower = _CHECKS.priority_out_of_reach(request)
        if lower:
            return {"refused": f"the launch's {lower} is below the warm server's, which only a privileged "
                               "process can lower; a cold start keeps it"}
        too_high = _CHECKS.limits_out_of_reach(request.get("limits") or {})
        if too_high:
            return {"refused": f"the launch's resource limit {too_high} is above the warm server's hard limit, "
                               "which only a new process can have"}
        why = _CHECKS.why_unsafe(self.allowed_threads)
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
        for launch in self.children.values():
            _reply(launch.conn, {"server_stopped": why or "the warm server ended"})
        for ending in (signal.SIGTERM, signal.SIGKILL):  # TERM first; KILL what is left after the grace
            for pid in list(self.children):
                try:
                    os.killpg(pid, ending)
                except OSError:
                    pass
            deadline = time.monotonic() + STOP_GRACE_S
            while self.children and time.monotonic() < deadline:
                self._reap()
                time.sleep(0.05)
        for launch in list(self.launches.values()):
            self._drop(launch, kill=True)


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

    def __init__(self, env: Dict[str, str], read: List[str], tensorflow: str, keras: str,
                 keras_module: str = "keras") -> None:
        self.env, self.read, self.tensorflow, self.keras = env, read, tensorflow, keras
        self.keras_module = keras_module  # tf_keras when the environment asked for Keras 2


class _StoppedError(Exception):
    pass


def _preload() -> Imported:
    """What a script's first lines import, done once here: TensorFlow, and the Keras its
    tf.keras is when installed (Keras 3 is imported by a script itself, not by TensorFlow;
    tf-keras under TF_USE_LEGACY_KERAS). The variables
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

        keras_module, keras_version = _import_keras()
    finally:
        os.environ.__class__ = environ_class
        os.environb.__class__ = environ_class
    names = sorted(env) if "*" in read else sorted(n for n in read if isinstance(n, str))
    return Imported(env, names, tf.__version__, keras_version, keras_module)


# TensorFlow's own test (tensorflow/__init__.py): these values make tf.keras tf-keras (Keras 2).
LEGACY_KERAS = ("true", "True", "1")


def _import_keras() -> Tuple[str, str]:
    """The Keras the program's `tf.keras` is, imported: its module and version ("" when none
    is installed): tf-keras when TF_USE_LEGACY_KERAS asks for it (a cold program never imports
    Keras 3 then, so neither does this server), else `keras` (Keras 3, or TensorFlow 2.15's
    own Keras 2)."""
    legacy = os.environ.get("TF_USE_LEGACY_KERAS") in LEGACY_KERAS
    name = "tf_keras" if legacy else "keras"
    try:
        if legacy:
            import tf_keras as keras  # type: ignore[import-untyped, import-not-found, unused-ignore]  # the user's, where asked for
        else:
            import keras
    except ImportError:
        return name, ""  # the program meets the same ImportError (or TensorFlow's warning) cold
    return name, str(getattr(keras, "__version__", ""))


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
                      "keras_module": imported.keras_module,
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
