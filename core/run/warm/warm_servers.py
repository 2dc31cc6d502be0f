"""The warm servers of this user: where they listen, which one serves a launch, how many
may run, and what each holds.

Access. A server runs whatever its connections ask as its user, so its socket lives in a
folder of that user's, created without following links and refused when it is not the
user's own 0700 folder; the server also checks each peer's uid with SO_PEERCRED.

Reuse. A server is keyed on what must be the same before `import tensorflow`: the
interpreter, its CPU affinity (TensorFlow sizes its thread pools from it), and the
variables of the families the native libraries it loads read (TF_*, CUDA*, LD_*, PYTHON*,
OMP_*, locale, ...). Any other variable (a run name, a seed of the user's) is applied in
the child after the fork. A variable Python code read during the server's own import is
checked by the server on each launch; when one differs the server refuses with its name,
and the launch goes to a server keyed on it as well, so what the import saw is always
what a cold start would have seen.

Cap. At most MAX_SERVERS servers and MAX_MEMORY_SHARE of the machine's memory: before a
new one starts, the idle ones are stopped oldest idle first.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import select
import signal
import socket
import stat
import struct
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from ...probe.outside_files import interpreter_folder
from ...settings.child import HOOK_CONFIG_ENV, PROBE_DIR
from ..process_tree import RUN_MARKER_ENV
from ..program import EVENTS_FD_ENV, OBSERVE_ENV

FORKSERVER = PROBE_DIR / "warm" / "forkserver.py"
DEFAULT_IDLE_S = 600.0
START_TIMEOUT_S = 300.0  # a first `import tensorflow` from a cold disk
MAX_SERVERS = 4
MAX_MEMORY_SHARE = 0.25  # of the machine's memory, for all of this user's servers together
# Families of variables the native libraries loaded by `import tensorflow` (TensorFlow,
# absl, gRPC, protobuf, oneDNN, OpenMP, the CUDA stack, glibc) and Python itself read.
IMPORT_PREFIXES = ("TF_", "TENSORFLOW", "XLA_", "CUDA", "CUDNN", "CUBLAS", "NCCL", "NV", "__NV", "__GL", "LD_",
                   "GLIBC_", "MALLOC_", "OMP_", "KMP_", "GOMP_", "MKL", "OPENBLAS", "GOTO", "BLIS", "DNNL",
                   "ONEDNN", "GRPC", "ABSL", "PROTOCOL_BUFFERS", "TCMALLOC", "LC_", "PYTHON", "KERAS", "OPENSSL",
                   "SSL_", "HDF5", "JAX", "TPU", "NUMPY", "NPY_")
IMPORT_NAMES = frozenset({"PATH", "HOME", "TMPDIR", "TMP", "TEMP", "TZ", "LANG", "LANGUAGE", "LOCPATH", "NLSPATH",
                          "GCONV_PATH"})
# Variables tflaunch sets per launch: never part of a key.
PER_LAUNCH = frozenset({HOOK_CONFIG_ENV, RUN_MARKER_ENV, EVENTS_FD_ENV, OBSERVE_ENV})
# A Unix socket's path must fit sockaddr_un (108 bytes on Linux, with its NUL); a key and
# ".sock" take 21 of them.
MAX_SOCKET_PATH = 100


class WarmStartError(Exception):
    """Why this launch cannot start warm; the caller starts it cold and says so."""


def runtime_dir() -> Path:
    """A private folder (this user's, mode 0700) for the servers' sockets, logs and locks:
    TFLAUNCH_RUNTIME_DIR (tests), else under $XDG_RUNTIME_DIR, else /tmp/tflaunch-UID, the
    first whose sockets' paths fit (a deep XDG_RUNTIME_DIR would not)."""
    candidates = [Path(os.environ["TFLAUNCH_RUNTIME_DIR"])] if os.environ.get("TFLAUNCH_RUNTIME_DIR") else []
    if os.environ.get("XDG_RUNTIME_DIR"):
        candidates.append(Path(os.environ["XDG_RUNTIME_DIR"]) / "tflaunch-warm")
    candidates.append(Path(f"/tmp/tflaunch-{os.getuid()}"))
    folder = next((c for c in candidates if len(str(c)) + 22 <= MAX_SOCKET_PATH), candidates[-1])
    return private_folder(folder)


def private_folder(folder: Path) -> Path:
    """`folder`, made if missing, checked to be this user's own 0700 folder; never through
    a link (in /tmp another user could have made the name first, as a link to a folder of
    theirs or of ours). WarmStartError with the reason and the remedy otherwise."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    remedy = f"remove it (rm -r {folder}) and launch again"
    if stat.S_ISLNK(info.st_mode):
        raise WarmStartError(f"{folder} is a symbolic link; a warm server's socket is kept only in a real folder "
                             f"of yours: {remedy}")
    if not stat.S_ISDIR(info.st_mode):
        raise WarmStartError(f"{folder} is not a folder: {remedy}")
    if info.st_uid != os.getuid():
        raise WarmStartError(f"{folder} belongs to uid {info.st_uid}, not you (uid {os.getuid()}); a warm server's "
                             f"socket runs code as you, so it is kept only in a folder of yours: {remedy}")
    if info.st_mode & 0o077:
        raise WarmStartError(f"{folder} can be entered by others (mode {stat.S_IMODE(info.st_mode):o}); "
                             f"`chmod 700 {folder}` or {remedy}")
    return folder


def read_at_import(name: str) -> bool:
    """Whether a native library loaded by `import tensorflow` may read this variable."""
    return name in IMPORT_NAMES or name.startswith(IMPORT_PREFIXES)


def server_key(python: str, env: Mapping[str, str], also: Sequence[str] = (), cwd: str | None = None) -> str:
    """The server for this interpreter and what its import depends on; `also`: variables a
    server's Python-level import read (its refusal names them)."""
    stable = sorted((k, v) for k, v in env.items()
                    if k not in PER_LAUNCH and (read_at_import(k) or k in also))
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    # The interpreter is its file and the folder it starts from (a venv is its folder: every
    # venv of one base Python is a link to the same file).
    data: list[Any] = [os.path.realpath(python), interpreter_folder(python), stable, sorted(also), affinity]
    if start_folder(env, cwd) != "/":
        data.append(start_folder(env, cwd))
    return hashlib.sha1(json.dumps(data).encode()).hexdigest()[:16]


def start_folder(env: Mapping[str, str], cwd: str | None = None) -> str:
    """Where a server starts: /, unless PYTHONPATH has a relative folder (Python makes it
    absolute from the folder it starts in), then the launch's own folder."""
    entries = env.get("PYTHONPATH", "").split(os.pathsep)
    if env.get("PYTHONPATH") and any(not os.path.isabs(e) for e in entries):
        return cwd or os.getcwd()
    return "/"


def server_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The server's own environment: the launch's, without the settings the children
    apply themselves (tf.config: listing GPUs would initialise CUDA in the server)."""
    return {k: v for k, v in env.items() if k not in PER_LAUNCH}


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def peer_uid(sock: socket.socket) -> int:
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[1])


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    if peer_uid(sock) != os.getuid():  # not our server: never hand it our terminal
        sock.close()
        raise WarmStartError(f"the process listening on {path} is not yours; remove the socket and launch again")
    return sock


def connect(python: str, env: Mapping[str, str], idle_s: float = DEFAULT_IDLE_S, parent: int = 0,
            also: Sequence[str] = (), cwd: str | None = None,
            on_started: Callable[[dict[str, object]], None] | None = None) -> socket.socket:
    """A connection to this launch's server, starting the server first when there is none;
    `on_started` hears the server's ready answer (its import time) when this launch started it."""
    key = server_key(python, env, also, cwd)
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
        make_room()
        answer = start_server(python, env, path, idle_s, parent, folder / f"{key}.log", start_folder(env, cwd))
        if on_started is not None:
            on_started(answer)
        sock = _connect(path)
    if sock is None:
        raise WarmStartError(f"the warm server did not listen on {path}")
    return sock


def start_server(python: str, env: Mapping[str, str], path: Path, idle_s: float, parent: int,
                 log: Path, folder: str = "/") -> dict[str, object]:
    command = [python, str(FORKSERVER), "--socket", str(path), "--idle", str(idle_s)]
    if parent:
        command += ["--parent", str(parent)]
    with open(log, "ab") as err:
        os.chmod(log, 0o600)
        proc = subprocess.Popen(command, env=server_environment(env), cwd=folder, stdin=subprocess.DEVNULL,
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
        raise WarmStartError(f"the warm server for {python} could not start: {why}")
    return dict(answer)


def _last_line(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


@dataclass(frozen=True)
class RunningServer:
    pid: int
    python: str
    socket: Path
    idle_limit_s: float
    log: Path
    memory: int  # bytes resident (RSS)
    idle_s: float | None  # None: it did not answer
    running: int  # scripts running now
    served: int


def query_state(path: Path, timeout: float = 2.0) -> dict[str, Any]:
    """A server's own account of itself (idle time, running scripts); {} when it does not answer."""
    try:
        sock = _connect(path)
    except WarmStartError:
        return {}
    if sock is None:
        return {}
    with sock:
        sock.settimeout(timeout)
        try:
            socket.send_fds(sock, [b'{"query": "state"}\n'], [])
            data = b""
            while b"\n" not in data:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
            answer = json.loads(data.split(b"\n", 1)[0])
        except (OSError, ValueError):
            return {}
    return answer if isinstance(answer, dict) else {}


def is_warm_server(proc: psutil.Process) -> bool:
    """A warm server, by its command line and its own session (a script forked from one has
    the same command line, but only a group of its own)."""
    try:
        cmdline = proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    return str(FORKSERVER) in cmdline and "--socket" in cmdline and _leads_its_session(proc.pid)


def running_servers() -> list[RunningServer]:
    """This user's warm servers in this runtime folder, from their command lines."""
    import psutil

    folder = runtime_dir()
    out = []
    for proc in psutil.process_iter(["cmdline", "uids", "memory_info"]):
        cmdline = proc.info.get("cmdline") or []
        if str(FORKSERVER) not in cmdline or "--socket" not in cmdline:
            continue
        uids = proc.info.get("uids")
        if uids is not None and uids.real != os.getuid():
            continue
        path = Path(cmdline[cmdline.index("--socket") + 1])
        if path.parent != folder or not _leads_its_session(int(proc.pid)):
            continue  # a script forked from a server has its command line, not its session
        limit = float(cmdline[cmdline.index("--idle") + 1]) if "--idle" in cmdline else DEFAULT_IDLE_S
        memory = proc.info.get("memory_info")
        state = query_state(path)
        idle = state.get("idle_s")
        out.append(RunningServer(int(proc.pid), cmdline[0], path, limit, path.with_suffix(".log"),
                                 int(memory.rss) if memory else 0,
                                 float(idle) if isinstance(idle, (int, float)) else None,
                                 int(state.get("running") or 0), int(state.get("served") or 0)))
    return out


def _leads_its_session(pid: int) -> bool:
    try:
        return os.getsid(pid) == pid
    except OSError:
        return False


def make_room(max_servers: int = MAX_SERVERS, max_share: float = MAX_MEMORY_SHARE) -> list[RunningServer]:
    """Stop idle servers, oldest idle first, until one more fits the cap; the ones stopped.
    Servers running a script are never stopped (a cap is no reason to kill a user's run)."""
    import psutil

    servers = running_servers()
    budget = psutil.virtual_memory().total * max_share
    mean = sum(s.memory for s in servers) / len(servers) if servers else 0.0
    idle = sorted((s for s in servers if s.running == 0 and s.idle_s is not None),
                  key=lambda s: -(s.idle_s or 0.0))
    stopped = []
    while idle and (len(servers) + 1 > max_servers or sum(s.memory for s in servers) + mean > budget):
        victim = idle.pop(0)
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim.pid, signal.SIGTERM)
        servers.remove(victim)
        stopped.append(victim)
    return stopped


def stop_servers() -> int:
    """End every warm server of this user (`tflaunch warm stop`); how many there were."""
    stopped = 0
    for server in running_servers():
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGTERM)
            stopped += 1
    return stopped


def server_pid(path: Path) -> int | None:
    """The pid of the server listening on `path`."""
    return next((s.pid for s in running_servers() if s.socket == path), None)
