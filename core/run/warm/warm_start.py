"""Warm start: run a user's `python script.py` in a child forked from a server that has
already imported TensorFlow (core/probe/warm/forkserver.py), instead of a fresh interpreter.

The client. It finds (or starts) the server for this launch (warm_servers.py), hands it
the launch's argv, working folder, environment, umask, resource limits and stdio (its own
file descriptors, over the socket), forwards the signals a terminal sends (Ctrl+Z and `fg`
included) and returns the script's exit status as a shell reports it. When the server
ends under the script, the client says so, ends the script's group and returns the status
of what ended it. Whatever makes a warm start impossible (another interpreter, an
interpreter option, a server that is not fork-safe) is returned as a reason, and the
caller starts the script cold.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...probe.outside_files import same_interpreter
from ..program import EVENTS_FD_ENV
from .warm_servers import (
    DEFAULT_IDLE_S,
    IMPORT_NAMES,
    IMPORT_PREFIXES,
    WarmStartError,
    connect,
    running_servers,
    server_key,
    stop_servers,
)

__all__ = ["DEFAULT_IDLE_S", "WarmStartError", "WarmLaunch", "plan", "run", "running_servers", "server_key",
           "stop_servers", "client_command", "CHILD_LINE", "COLD_LINE", "SERVER_LINE", "server_line", "cold_line"]

# Signals a terminal or a launcher sends that are the script's: forwarded to its group.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
           signal.SIGWINCH)
STOP_GRACE_S = 2.0  # a script outliving its server gets this long to end on SIGTERM
# The client tells its launcher (the app) which process runs the script, so the launcher can
# sample that process's memory: the script is the server's child, not the client's.
CHILD_LINE = "tflaunch: warm start: the script runs as pid "
COLD_LINE = "tflaunch: warm start not possible ("  # then the reason, and "; starting cold"
COLD_END = "); starting cold"
# No server was running: this launch started one and waited for its import, which its time
# then includes; the seconds of that import follow.
SERVER_LINE = "tflaunch: warm start: no warm server was running, so this launch started one; its import took "
ServerStarted = Callable[[dict[str, object]], None]


def server_line(answer: dict[str, object]) -> str:
    """What a launch that started its server says (the client's stderr, `tflaunch run --warm`)."""
    seconds = answer.get("import_s")
    took = f"{float(seconds):.3f} s" if isinstance(seconds, (int, float)) else "an unknown time"
    return f"{SERVER_LINE}{took} (this launch waited for it; later warm launches reuse the server)"


def cold_line(reason: object) -> str:
    return f"{COLD_LINE}{reason}{COLD_END}"


@dataclass(frozen=True)
class WarmLaunch:
    python: str
    argv: list[str]  # after the interpreter: SCRIPT ARGS, -m MODULE ARGS or -c CODE ARGS
    env: dict[str, str]
    cwd: str
    orig_argv: list[str] = field(default_factory=list)  # the command as typed: the script's sys.orig_argv


def plan(command: Sequence[str], python: str, env: Mapping[str, str], cwd: str | None = None) -> WarmLaunch:
    """The warm form of `command` (`python ...`), or WarmStartError saying why not."""
    if not command:
        raise WarmStartError("there is no command")
    found = shutil.which(command[0], path=env.get("PATH")) if os.sep not in command[0] else command[0]
    # The same interpreter is the same file started from the same folder: every venv's python
    # is a link to one base interpreter, whose packages are not the venv's.
    if not found or not same_interpreter(found, python):
        raise WarmStartError(f"{command[0]} is not the interpreter of this launch's settings ({python}: --python, "
                             "or the profile's); a warm server runs that interpreter only")
    rest = list(command[1:])
    if not rest:
        raise WarmStartError("an interactive interpreter cannot start warm; give a script")
    if rest[0] in ("-m", "-c"):
        if len(rest) < 2:
            raise WarmStartError(f"{rest[0]} needs an argument")
    elif rest[0].startswith("-"):
        raise WarmStartError(f"the interpreter option {rest[0]} changes how Python starts; warm starts run "
                                   "`python SCRIPT`, `python -m MODULE` or `python -c CODE`")
    return WarmLaunch(python, rest, dict(env), cwd or os.getcwd(), list(command))


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
        parent: int = 0, on_started: Callable[[int], None] | None = None,
        on_server_started: ServerStarted | None = None) -> int:
    """Run the launch warm; its exit status as a shell reports it (128 + N for signal N).
    WarmStartError when it cannot start warm (nothing has run then). `on_server_started`
    hears the server's ready answer when no server was running and this launch started one."""
    # Which of the stdio descriptors are closed, decided before any socket of ours can
    # take a free number among 0-2 (Python's own stdio object is None for a closed one).
    closed = [n for n, fd in enumerate(stdio) if not _is_open(fd)
              or (fd == n and getattr(sys, ("__stdin__", "__stdout__", "__stderr__")[n]) is None)]
    # A signal between the fork and the handlers would end this client by default and the
    # script with it: held until the handlers are in place, then forwarded.
    held = {*SIGNALS, signal.SIGTSTP, signal.SIGCONT}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        sock, pid, buffer = _start(launch, stdio, idle_s, parent, closed, on_server_started)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        raise
    with sock:
        if on_started is not None:
            on_started(pid)
        with _forwarding(pid, unblock=held):
            answer = _receive(sock, buffer)
            if answer is not None and "server_stopped" in answer:
                _say(f"{answer['server_stopped']}; the script (pid {pid}) was ended")
                answer = _receive(sock, buffer)
    if answer is None or "status" not in answer:
        return _outlived_server(pid)
    code = os.waitstatus_to_exitcode(int(str(answer["status"])))
    return 128 - code if code < 0 else code


def _start(launch: WarmLaunch, stdio: tuple[int, int, int], idle_s: float, parent: int,
           closed: list[int], on_server_started: ServerStarted | None = None) -> tuple[socket.socket, int, bytearray]:
    """The server's answer to this launch: (connection, the script's pid, what was read
    after the answer). A server whose import read a variable this launch sets otherwise
    refuses with its name; the launch then goes to a server keyed on it as well."""
    also: list[str] = []
    for _ in range(3):
        sock = connect(launch.python, launch.env, idle_s, parent, also, launch.cwd, on_server_started)
        buffer = bytearray()
        try:
            socket.send_fds(sock, [_request(launch, closed)], _descriptors(launch, stdio, closed))
            answer = _receive(sock, buffer)
        except OSError:
            answer = {"retry": True}  # a server that was ending as we connected: nothing ran
        except BaseException:
            sock.close()
            raise
        if answer is not None and "pid" in answer:
            return sock, int(str(answer["pid"])), buffer
        sock.close()
        if answer is None or answer.get("retry"):
            time.sleep(0.1)
            continue
        rekey = answer.get("rekey") if answer else None
        if isinstance(rekey, list) and rekey and not set(map(str, rekey)) <= set(also):
            also = sorted({*also, *map(str, rekey)})
            continue
        raise WarmStartError(str(answer["refused"]) if answer and "refused" in answer
                             else "the warm server closed the connection")
    raise WarmStartError("no warm server would take this launch")


def _request(launch: WarmLaunch, closed: list[int]) -> bytes:
    import resource

    umask = os.umask(0)
    os.umask(umask)
    limits = {name: list(resource.getrlimit(getattr(resource, name)))
              for name in dir(resource) if name.startswith("RLIMIT_")}
    return json.dumps({"argv": launch.argv, "cwd": launch.cwd, "env": launch.env, "started": _started(),
                       "orig_argv": launch.orig_argv, "umask": umask, "limits": limits,
                       "nice": os.getpriority(os.PRIO_PROCESS, 0), "oom_score_adj": _oom_score_adj(),
                       "import_families": [*IMPORT_PREFIXES, *sorted(IMPORT_NAMES)],
                       "terminal": _has_terminal(), "ignored": ignored_signals(),
                       "closed": closed}).encode() + b"\n"


def _oom_score_adj() -> int | None:
    try:
        with open("/proc/self/oom_score_adj") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _has_terminal() -> bool:
    """Whether this client has a controlling terminal (which the warm child cannot have)."""
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def _descriptors(launch: WarmLaunch, stdio: tuple[int, int, int], closed: list[int]) -> list[int]:
    # A measured program's event channel goes along after the open stdio descriptors; the
    # child observes itself from the moment it is forked (started: this launch's time zero).
    events = launch.env.get(EVENTS_FD_ENV, "")
    open_stdio = [fd for n, fd in enumerate(stdio) if n not in closed]
    return [*open_stdio, int(events)] if events.isdigit() else open_stdio


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def ignored_signals() -> list[int]:
    """The signals this launcher ignores, as it inherited them (nohup's SIGHUP, a background
    job's SIGINT and SIGQUIT). An ignored disposition survives exec, so a cold script ignores
    them too: the warm child is told to, and this client does not take them up to forward."""
    kept = (*SIGNALS, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)
    return sorted(int(s) for s in kept if signal.getsignal(s) == signal.SIG_IGN)


@contextlib.contextmanager
def _forwarding(pid: int, unblock: set[signal.Signals] | None = None) -> Any:
    """While the script runs, the signals sent to this client are the script's. Ctrl+Z
    stops the script's group and then this client (so the shell sees the job stopped);
    `fg` continues this client, which continues the script."""
    def stop(_number: int, _frame: Any) -> None:
        _forward(pid, signal.SIGTSTP)
        os.kill(os.getpid(), signal.SIGSTOP)

    handlers: dict[int, Any] = {sig: (lambda number, _frame: _forward(pid, number)) for sig in SIGNALS}
    handlers[signal.SIGTSTP] = stop
    handlers[signal.SIGCONT] = lambda _number, _frame: _forward(pid, signal.SIGCONT)
    for ignored in ignored_signals():  # under nohup a hang-up ends neither this client nor the script
        handlers.pop(ignored, None)
    previous = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
    if unblock:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, unblock)  # what came meanwhile is forwarded now
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _outlived_server(pid: int) -> int:
    """The server ended without the script's status (killed): the script is ours to end,
    with its group, and the shell gets the status of what ended it."""
    ended_by = signal.SIGTERM
    _forward(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while _group_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _group_alive(pid):
        ended_by = signal.SIGKILL
        _forward(pid, signal.SIGKILL)
    _say(f"the warm server ended during the run (killed, or it crashed); the script (pid {pid}) and the "
         f"processes it started were ended with {ended_by.name}. Run it again; a new server starts.")
    return 128 + ended_by


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _running_in_group(pgid)


def _running_in_group(pgid: int) -> bool:
    """Whether a member of the group still runs: one that only waits to be reaped (a zombie,
    reparented when its server was killed, to a reaper that may take its time) has ended,
    and must not earn the group a SIGKILL as if it had outlived the SIGTERM."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return True  # no /proc: the kernel's answer above stands
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _say(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"tflaunch: {message}", file=sys.stderr, flush=True)


def _started() -> float:
    """When this launch began (wall clock): the client process's own start."""
    from ...probe.age import process_age

    age = process_age()
    return time.time() - (age or 0.0)


def _forward(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, number)


def client_command(python: str, command: Sequence[str], parent: int, idle_s: float = DEFAULT_IDLE_S) -> list[str]:
    """argv of a client process that runs `command` warm (cold, by exec, when it cannot):
    the app's QProcess runs this, with the launch's environment. -I keeps the user's
    PYTHONPATH and variables from changing the client's own imports."""
    return [sys.executable, "-I", "-m", "tflaunch.core.run.warm.warm_start", "--python", python,
            "--parent", str(parent), "--idle", str(idle_s), "--", *command]


def main(argv: Sequence[str] | None = None) -> None:
    """The client as a program: its environment is the launch's; its stdio the script's."""
    import argparse

    parser = argparse.ArgumentParser(prog="tflaunch-warm-client")
    parser.add_argument("--python", required=True)
    parser.add_argument("--parent", type=int, default=0)
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_S)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    env = dict(os.environ)
    if EVENTS_FD_ENV in env:  # measured: a background job of the launcher's terminal, as a cold run is
        from ...probe.terminal import leave_terminal

        leave_terminal()
    try:
        launch = plan(command, args.python, env)
        code = run(launch, idle_s=args.idle, parent=args.parent,
                   on_started=lambda pid: print(f"{CHILD_LINE}{pid}", file=sys.stderr, flush=True),
                   on_server_started=lambda answer: print(server_line(answer), file=sys.stderr, flush=True))
    except WarmStartError as exc:
        print(cold_line(exc), file=sys.stderr, flush=True)
        os.execvpe(command[0], command, env)  # the cold start, in this very process
    sys.stdout.flush()
    if code > 128 and code - 128 in {s.value for s in signal.Signals}:
        if code - 128 not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset (EINVAL)
            signal.signal(code - 128, signal.SIG_DFL)  # end as the script did: by its signal
        os.kill(os.getpid(), code - 128)
    sys.exit(code)


if __name__ == "__main__":
    main()
