"""Warm start: run a user's `python script.py` in a child forked from a server that has
already imported TensorFlow (core/probe/forkserver.py), instead of a fresh interpreter.

One server per interpreter and per environment (the variables TensorFlow and CUDA read at
import are in it; so are the user's), started on demand and ended after an idle time, or
with the app that started it. The child gets the launch's own argv, working folder,
environment and stdio (the client's file descriptors, passed over the socket), and the
client returns its exit status and forwards the signals a terminal sends. Whatever makes a
warm start impossible (another interpreter, an interpreter option, a server that is not
fork-safe) is returned as a reason, and the caller starts the script cold.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..settings.child import HOOK_CONFIG_ENV, PROBE_DIR
from .process_tree import RUN_MARKER_ENV
from .program import EVENTS_FD_ENV, OBSERVE_ENV

FORKSERVER = PROBE_DIR / "forkserver.py"
DEFAULT_IDLE_S = 600.0
START_TIMEOUT_S = 300.0  # a first `import tensorflow` from a cold disk
# Variables a shell changes between prompts and terminals that nothing reads at import:
# they do not make a new server (the child still gets the launch's own values).
VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "TERM_SESSION_ID", "WINDOWID",
                      "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "XDG_SESSION_ID", HOOK_CONFIG_ENV, RUN_MARKER_ENV,
                      EVENTS_FD_ENV, OBSERVE_ENV})
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
# The client tells its launcher (the app) which process runs the script, so the launcher can
# sample that process's memory: the script is the server's child, not the client's.
CHILD_LINE = "tflaunch: warm start: the script runs as pid "


class WarmStartError(Exception):
    """Why this launch cannot start warm; the caller starts it cold and says so."""


@dataclass(frozen=True)
class WarmLaunch:
    python: str
    argv: list[str]  # after the interpreter: SCRIPT ARGS, -m MODULE ARGS or -c CODE ARGS
    env: dict[str, str]
    cwd: str


# A Unix socket's path must fit sockaddr_un (108 bytes on Linux, with its NUL); a key and
# ".sock" take 21 of them.
MAX_SOCKET_PATH = 100


def runtime_dir() -> Path:
    """A private folder (this user's, mode 0700) for the servers' sockets, logs and locks:
    TFLAUNCH_RUNTIME_DIR (tests), else under $XDG_RUNTIME_DIR, else /tmp/tflaunch-UID, the
    first whose sockets' paths fit (a deep XDG_RUNTIME_DIR would not)."""
    candidates = [Path(os.environ["TFLAUNCH_RUNTIME_DIR"])] if os.environ.get("TFLAUNCH_RUNTIME_DIR") else []
    if os.environ.get("XDG_RUNTIME_DIR"):
        candidates.append(Path(os.environ["XDG_RUNTIME_DIR"]) / "tflaunch-warm")
    candidates.append(Path(f"/tmp/tflaunch-{os.getuid()}"))
    folder = next((c for c in candidates if len(str(c)) + 22 <= MAX_SOCKET_PATH), candidates[-1])
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid():
        raise WarmStartError(f"{folder} belongs to another user; a warm server's socket runs code as you, so it "
                             "is only kept in a folder of yours")
    if info.st_mode & 0o077:
        folder.chmod(0o700)
    return folder


def server_key(python: str, env: Mapping[str, str]) -> str:
    stable = sorted((k, v) for k, v in env.items() if k not in VOLATILE)
    return hashlib.sha1(json.dumps([os.path.realpath(python), stable]).encode()).hexdigest()[:16]


def plan(command: Sequence[str], python: str, env: Mapping[str, str], cwd: str | None = None) -> WarmLaunch:
    """The warm form of `command` (`python ...`), or WarmStartError saying why not."""
    if not command:
        raise WarmStartError("there is no command")
    found = shutil.which(command[0], path=env.get("PATH")) if os.sep not in command[0] else command[0]
    if not found or os.path.realpath(found) != os.path.realpath(python):
        raise WarmStartError(f"{command[0]} is not the profile's interpreter {python}; a warm server runs that "
                                   "interpreter only")
    rest = list(command[1:])
    if not rest:
        raise WarmStartError("an interactive interpreter cannot start warm; give a script")
    if rest[0] in ("-m", "-c"):
        if len(rest) < 2:
            raise WarmStartError(f"{rest[0]} needs an argument")
    elif rest[0].startswith("-"):
        raise WarmStartError(f"the interpreter option {rest[0]} changes how Python starts; warm starts run "
                                   "`python SCRIPT`, `python -m MODULE` or `python -c CODE`")
    return WarmLaunch(python, rest, dict(env), cwd or os.getcwd())


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


def connect(launch: WarmLaunch, idle_s: float = DEFAULT_IDLE_S, parent: int = 0) -> socket.socket:
    """A connection to this launch's server, starting the server first when there is none."""
    key = server_key(launch.python, launch.env)
    folder = runtime_dir()
    path = folder / f"{key}.sock"
    sock = _connect(path)
    if sock is not None:
        return sock
    with _locked(folder / f"{key}.lock"):
        sock = _connect(path)  # another launcher started it while we waited
        if sock is not None:
            return sock
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a server that ended without removing it
        start_server(launch, path, idle_s, parent, folder / f"{key}.log")
        sock = _connect(path)
    if sock is None:
        raise WarmStartError(f"the warm server did not listen on {path}")
    return sock


def server_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The server's own environment: the launch's, without the settings the children
    apply themselves (tf.config: listing GPUs would initialise CUDA in the server)."""
    return {k: v for k, v in env.items() if k not in (HOOK_CONFIG_ENV, RUN_MARKER_ENV, EVENTS_FD_ENV, OBSERVE_ENV)}


def start_server(launch: WarmLaunch, path: Path, idle_s: float, parent: int, log: Path) -> dict[str, object]:
    command = [launch.python, str(FORKSERVER), "--socket", str(path), "--idle", str(idle_s)]
    if parent:
        command += ["--parent", str(parent)]
    with open(log, "ab") as err:
        proc = subprocess.Popen(command, env=server_environment(launch.env), cwd="/", stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=err, start_new_session=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    line = b""
    while b"\n" not in line and time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            line += chunk
    proc.stdout.close()
    try:
        answer = json.loads(line.split(b"\n", 1)[0] or b"{}")
    except ValueError:
        answer = {}
    if not answer.get("ready"):
        if proc.poll() is None:
            proc.kill()
        why = answer.get("error") or _last_line(log) or "it ended before it was ready"
        raise WarmStartError(f"the warm server for {launch.python} could not start: {why}")
    return dict(answer)


def _last_line(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def _receive(sock: socket.socket, buffer: bytearray) -> dict[str, object] | None:
    while b"\n" not in buffer:
        try:
            chunk = sock.recv(4096)
        except InterruptedError:
            continue
        if not chunk:
            return None
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    answer = json.loads(line)
    return answer if isinstance(answer, dict) else None


def run(launch: WarmLaunch, stdio: tuple[int, int, int] = (0, 1, 2), idle_s: float = DEFAULT_IDLE_S,
        parent: int = 0, on_started: Callable[[int], None] | None = None) -> int:
    """Run the launch warm; its exit status as a shell reports it (128 + N for signal N).
    WarmStartError when it cannot start warm (nothing has run then)."""
    sock = connect(launch, idle_s, parent)
    with sock:
        # A measured program's event channel goes along as a fourth descriptor; the child
        # observes itself from the moment it is forked (started: this launch's time zero).
        events = launch.env.get(EVENTS_FD_ENV, "")
        fds = [*stdio, int(events)] if events.isdigit() else list(stdio)
        request = json.dumps({"argv": launch.argv, "cwd": launch.cwd, "env": launch.env,
                              "started": _started()}).encode() + b"\n"
        socket.send_fds(sock, [request], fds)
        buffer = bytearray()
        answer = _receive(sock, buffer)
        if answer is None or "refused" in answer:
            raise WarmStartError(str(answer["refused"]) if answer else "the warm server closed the connection")
        pid = int(str(answer["pid"]))
        if on_started is not None:
            on_started(pid)
        previous = {sig: signal.signal(sig, lambda number, _frame: _forward(pid, number)) for sig in SIGNALS}
        try:
            answer = _receive(sock, buffer)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    if answer is None or "status" not in answer:
        return 1  # the server ended under the child: the child went with it
    code = os.waitstatus_to_exitcode(int(str(answer["status"])))
    return 128 - code if code < 0 else code


def _started() -> float:
    """When this launch began (wall clock): the client process's own start."""
    from ..probe.age import process_age

    age = process_age()
    return time.time() - (age or 0.0)


def _forward(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, number)


@dataclass(frozen=True)
class RunningServer:
    pid: int
    python: str
    socket: Path
    idle_s: float
    log: Path


def running_servers() -> list[RunningServer]:
    """This user's warm servers in this runtime folder, from their command lines."""
    import psutil

    folder = runtime_dir()
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if str(FORKSERVER) not in cmdline or "--socket" not in cmdline:
            continue
        path = Path(cmdline[cmdline.index("--socket") + 1])
        if path.parent != folder:
            continue
        idle = float(cmdline[cmdline.index("--idle") + 1]) if "--idle" in cmdline else DEFAULT_IDLE_S
        out.append(RunningServer(int(proc.pid), cmdline[0], path, idle, path.with_suffix(".log")))
    return out


def stop_servers() -> int:
    """End every warm server of this user (`tflaunch warm stop`); how many there were."""
    stopped = 0
    for server in running_servers():
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGTERM)
            stopped += 1
    return stopped


def _server_pid(path: Path) -> int | None:
    """The pid of the server listening on `path`."""
    return next((s.pid for s in running_servers() if s.socket == path), None)


def client_command(python: str, command: Sequence[str], parent: int, idle_s: float = DEFAULT_IDLE_S) -> list[str]:
    """argv of a client process that runs `command` warm (cold, by exec, when it cannot):
    the app's QProcess runs this, with the launch's environment. -I keeps the user's
    PYTHONPATH and variables from changing the client's own imports."""
    import sys

    return [sys.executable, "-I", "-m", "tflaunch.core.run.warm_start", "--python", python, "--parent", str(parent),
            "--idle", str(idle_s), "--", *command]


def main(argv: Sequence[str] | None = None) -> None:
    """The client as a program: its environment is the launch's; its stdio the script's."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="tflaunch-warm-client")
    parser.add_argument("--python", required=True)
    parser.add_argument("--parent", type=int, default=0)
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_S)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    env = dict(os.environ)
    try:
        launch = plan(command, args.python, env)
        code = run(launch, idle_s=args.idle, parent=args.parent,
                   on_started=lambda pid: print(f"{CHILD_LINE}{pid}", file=sys.stderr, flush=True))
    except WarmStartError as exc:
        print(f"tflaunch: warm start not possible ({exc}); starting cold", file=sys.stderr, flush=True)
        os.execvpe(command[0], command, env)  # the cold start, in this very process
    sys.stdout.flush()
    if code > 128 and code - 128 in {s.value for s in signal.Signals}:
        signal.signal(code - 128, signal.SIG_DFL)  # end as the script did: by its signal
        os.kill(os.getpid(), code - 128)
    sys.exit(code)


if __name__ == "__main__":
    main()
