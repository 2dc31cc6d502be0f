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
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

MAX_REQUEST = 4 << 20  # an environment and an argv: a few hundred kB at most
TICK_S = 0.2


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


def _run_child(request: Dict[str, Any], fds: List[int]) -> None:
    """In the forked child: become the user's `python ARGV...` and never return."""
    code = 1
    try:
        os.setpgid(0, 0)  # its own group: the client's signals and a cancel reach all it starts
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        # A measured program's event channel: kept (at a number of its own), not inherited.
        events = os.dup(fds[3]) if len(fds) > 3 else None
        for fd in fds:
            if fd > 2:
                os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for name in ("SIGTERM", "SIGCHLD", "SIGHUP"):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # The server's own stdio objects wrapped its fds 0-2, which now are the client's:
        # new ones, buffered as a fresh interpreter buffers them.
        sys.stdin, sys.stdout, sys.stderr = _stream(0, "r"), _stream(1, "w"), _stream(2, "w")
        _apply_tf_config(os.environ.get("TFLAUNCH_TF_CONFIG"))
        if events is not None:
            _observe(events, request.get("started"))
        code = _run_main(list(request["argv"]))
    except SystemExit as exc:
        code = _exit_code(exc)
    except KeyboardInterrupt:
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)  # as Python ends on an uncaught Ctrl+C
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    _finish(code)


def _stream(fd: int, mode: str) -> Any:
    import io

    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED")) and mode == "w"
    raw = open(fd, mode + "b", buffering=0 if unbuffered else -1, closefd=False)
    return io.TextIOWrapper(raw, encoding=sys.__stdout__.encoding if sys.__stdout__ else None,
                            errors="backslashreplace" if fd == 2 else None,
                            line_buffering=fd == 2 or os.isatty(fd), write_through=unbuffered)


def _run_main(argv: List[str]) -> int:
    """argv after the interpreter: SCRIPT ARGS, -m MODULE ARGS or -c CODE ARGS."""
    import runpy

    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path.insert(0, "")
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        else:
            sys.argv = list(argv)
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        return _exit_code(exc)
    return 0


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    sys.stderr.write(f"{exc.code}\n")
    return 1


def _apply_tf_config(raw: Optional[str]) -> None:
    """The launch hook's tf.config settings, applied in the child as the hook would."""
    if not raw or "tensorflow" not in sys.modules:
        return
    try:
        _probe_module("tf_setup").apply_tf_config(sys.modules["tensorflow"], json.loads(raw))
    except Exception as exc:  # the script runs even if a setting cannot be applied, as cold
        sys.stderr.write(f"tflaunch: could not apply the launch profile's TensorFlow settings: {exc}\n")


def _observe(fd: int, started: Any) -> None:
    """The launch hook's observer in a warm child: the program's phases from the fork on
    (TensorFlow and Keras are imported already: no import phase, which this launch did not pay)."""
    os.environ.pop("TFLAUNCH_EVENTS_FD", None)
    raw = os.environ.pop("TFLAUNCH_OBSERVE", None)
    try:
        settings = json.loads(raw) if raw else {}
        age = time.time() - float(started) if isinstance(started, (int, float)) else None
        observe = _probe_module("observe")
        observe.warm_start(observe.install(fd, settings, age))
    except Exception as exc:  # the script runs unobserved rather than not at all
        sys.stderr.write(f"tflaunch: cannot observe this program ({type(exc).__name__}: {exc}); it runs unobserved\n")


def _probe_module(name: str) -> Any:
    """A module of the probe package, loaded by location as the probe and the launch hook
    load it (this file runs by path; its folder is not on sys.path)."""
    import importlib
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("tflaunch_probe_entry", os.path.join(here, "__main__.py"))
    assert spec is not None and spec.loader is not None
    entry = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entry)
    return importlib.import_module(entry.load_package().__name__ + "." + name)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _finish(code: int) -> None:
    """End as an interpreter ends: wait for non-daemon threads, run atexit, flush."""
    import atexit
    import threading

    try:
        threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter calls at exit
    except Exception:
        pass
    try:
        atexit._run_exitfuncs()
    except Exception:
        pass
    _flush()
    os._exit(code)


class Server:
    def __init__(self, path: str, idle_s: float, parent: Optional[int]) -> None:
        self.path, self.idle_s, self.parent = path, idle_s, parent
        self.selector = selectors.DefaultSelector()
        self.launches: Dict[socket.socket, Launch] = {}
        self.children: Dict[int, Launch] = {}
        self.last_active = time.monotonic()
        self.allowed_threads = 0
        self.listener: Optional[socket.socket] = None
        self.unsafe: Optional[str] = None

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
                else:
                    self._read(key.fileobj)  # type: ignore[arg-type]
            self._reap()
            if self.unsafe and not self.children:
                return
            if self.launches or self.children:
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
            if not isinstance(request.get("argv"), list) or not request["argv"] or len(launch.fds) < 3:
                raise ValueError("argv and three descriptors are needed")
        except (ValueError, AttributeError) as exc:
            _reply(conn, {"refused": f"a malformed launch request ({exc})"})
            self._drop(launch)
            return
        why = why_unsafe(self.allowed_threads)
        if why:
            # Threads and CUDA do not go away: this server can never fork again, so it ends
            # once its children have, and the next launch starts a fresh one.
            _reply(conn, {"refused": why})
            self._drop(launch)
            self.unsafe = why
            return
        pid = os.fork()
        if pid == 0:
            self.selector.close()
            if self.listener is not None:
                self.listener.close()
            for other in self.launches:
                if other is not conn:
                    other.close()
            conn.close()
            _run_child(request, launch.fds)
        launch.pid = pid
        self.children[pid] = launch
        for fd in launch.fds:
            os.close(fd)
        launch.fds = []
        _reply(conn, {"pid": pid})

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

    def close(self) -> None:
        for launch in list(self.launches.values()):
            self._drop(launch, kill=True)
        try:
            os.unlink(self.path)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _preload() -> Tuple[str, str]:
    """What a script's first lines import, done once here: TensorFlow, and Keras when
    installed (Keras 3 is imported by a script itself, not by TensorFlow)."""
    import tensorflow as tf

    try:
        import keras

        return tf.__version__, getattr(keras, "__version__", "")
    except ImportError:
        return tf.__version__, ""


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="tflaunch-forkserver")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--idle", type=float, default=600.0)
    parser.add_argument("--parent", type=int, default=0)
    args = parser.parse_args(argv)
    if args.parent and not _alive(args.parent):
        return  # the app that wanted it is already gone
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl+C is for the client's child
    started = time.perf_counter()
    tensorflow, keras = _preload()
    server = Server(args.socket, args.idle, args.parent or None)
    try:
        server.start()
    except OSError as exc:
        print(json.dumps({"error": f"cannot listen on {args.socket}: {exc}"}), flush=True)
        return
    print(json.dumps({"ready": True, "pid": os.getpid(), "tensorflow": tensorflow, "keras": keras,
                      "import_s": time.perf_counter() - started, "threads": 1 + server.allowed_threads}), flush=True)
    try:
        server.serve()
    finally:
        server.close()


if __name__ == "__main__":
    # Run by path: this folder is sys.path[0], where its module names would shadow the
    # user's own (a script's `import channel`); take it off, as the probe does.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    main()
