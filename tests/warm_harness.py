"""The harness of the warm/cold differential test: one case run as a plain `python ...` and
through the warm client, with pipes or under a pty with a job-control shell, and what it
showed, settled for what differs from run to run whoever runs it (tests/test_warm_differential.py
has the table and the tests)."""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

from tflaunch.core.run.warm.warm_start import SERVER_LINE

PY = sys.executable
CASES = Path(__file__).with_name("warm_cases")
CLIENT = [PY, "-I", "-m", "tflaunch.core.run.warm.warm_start", "--python", PY, "--idle", "120", "--"]
ANNOUNCED = re.compile(r"tflaunch: warm start: the script runs as pid (\d+)\r?\n")
REFUSED = re.compile(r"tflaunch: warm start not possible \((.*)\); starting cold\r?\n")
# The client's line when it had to start the server first (its import was this launch's wait).
SERVER_STARTED = re.compile(re.escape(SERVER_LINE) + r"[^\n]*\r?\n")
ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
# The lines TensorFlow's native libraries print while `import tensorflow` loads them (CPU and
# GPU builds): a warm child's TensorFlow was loaded by the server, whose log has them.
TF_IMPORT_LOG = re.compile(r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR\n"
                           r"|[IWE]\d{4} [\d:.]+ +\d+ (port|cudart_stub|cpu_feature_guard|cuda_fft|cuda_dnn|cuda_blas)"
                           r"\.cc:\d+\] .*\n(To enable the following instructions.*\n)?")
# absl's log prefix (TensorFlow's C++ logging): its date, time and thread differ run to run.
ABSL_PREFIX = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:[\d.]+ +\d+ ", re.MULTILINE)
COLD_TIMEOUT_S = 20.0
# What a warm launch may take beyond three cold ones: a new server's import of TensorFlow,
# which took 6.04 s on this 2-core machine while the slow tier's other worker ran TensorFlow
# too (a 6 s allowance timed the pythonpath_dot case out there). A hang still fails in seconds.
WARM_ALLOWANCE_S = 20.0
SETTLE_S = 0.2
BIG = 1 << 20  # stdout longer than this is compared by its length and digest
TERMINAL = "terminal"


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]  # after `python`; {cases} stands for the cases' folder
    cwd: str = ""  # under the cases' folder
    stdin: bytes | None = b""  # None: no fd 0 at all
    # pipes: stdout and stderr apart; merged: into one pipe; signal: `signal` to the launched
    # process once the script printed "ready"; head: the reader closes stdout after a line;
    # terminal: a pty and a job-control shell, driven by `keys`; varies: two runs must differ
    mode: str = "pipes"
    signal: int = 0
    keys: tuple[tuple[str, object], ...] = ()  # ("wait"|"type", text), ("resize", (rows, cols)), ("suspend", None)
    repeats: str = ""  # a line printed a timing-dependent number of times: a run of them counts as one
    env: tuple[tuple[str, str], ...] = ()  # variables of this case's own
    setup: Callable[[], None] | None = None  # the launcher's process state (umask, limits...)
    outputs: tuple[str, ...] = ()  # files the script writes in its folder
    refused: str = ""  # inherent and seen beforehand: the client must refuse, naming this
    said: str = ""  # inherent, met while the script runs: the warm child must say so, naming this
    tf_import_log: bool = False  # TensorFlow's load-time log lines are not compared


@dataclasses.dataclass
class Seen:
    """What a run showed, after `settle`."""

    status: int | str
    stdout: str
    stderr: str
    files: dict[str, str]
    shell: tuple[str, ...] = ()  # the job-control shell's events (terminal cases)


@dataclasses.dataclass
class Run:
    seen: Seen
    elapsed: float
    warm_pid: int | None = None  # from the client's line
    refusal: str | None = None



@dataclasses.dataclass(frozen=True)
class Lab:
    folder: Path
    env: dict[str, str]
    runtime: str




def _kill_group(pid: int | None) -> None:
    if pid:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def _read_until(fd: int, marker: bytes, seconds: float) -> bytes:
    got = b""
    deadline = time.monotonic() + seconds
    while marker not in got and time.monotonic() < deadline:
        if select.select([fd], [], [], max(deadline - time.monotonic(), 0))[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            got += chunk
    return got


def _exchange(proc: subprocess.Popen[bytes], data: bytes | None, seconds: float) -> tuple[bytes, bytes, bool]:
    """Write `data` to stdin and read stdout and stderr until both end or the time is up:
    (out, err, whether they ended). communicate() would wait on, for a pipe a hung warm
    script still holds after its client was killed."""
    pipes = {p.fileno(): bytearray() for p in (proc.stdout, proc.stderr) if p is not None and not p.closed}
    pending = memoryview(data or b"")
    writing = [proc.stdin.fileno()] if proc.stdin is not None and not proc.stdin.closed else []
    if not pending and writing:
        assert proc.stdin is not None
        proc.stdin.close()
        writing = []
    deadline = time.monotonic() + seconds
    reading = list(pipes)
    while reading and time.monotonic() < deadline:
        readable, writable, _ = select.select(reading, writing, [], max(deadline - time.monotonic(), 0))
        for fd in readable:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                pipes[fd] += chunk
            else:
                reading.remove(fd)
        if writable:
            try:
                pending = pending[os.write(writing[0], pending[:1 << 16]):]
            except BrokenPipeError:
                pending = pending[:0]
            if not pending:
                assert proc.stdin is not None
                proc.stdin.close()
                writing = []
    out, err = (bytes(pipes.get(p.fileno(), b"")) if p is not None and not p.closed else b""
                for p in (proc.stdout, proc.stderr))
    return out, err, not reading


def run_with_pipes(c: Case, command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple:
    """(status, stdout, stderr) of one launch with pipes for its stdio."""
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL if c.stdin is None else subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT if c.mode == "merged" else subprocess.PIPE,
                            process_group=0, preexec_fn=c.setup)
    assert proc.stdout is not None
    first = b""
    if c.mode == "signal":
        first = _read_until(proc.stdout.fileno(), b"ready\n", timeout)
        time.sleep(SETTLE_S)  # a launcher signals a running script, not one still starting (README)
        proc.send_signal(c.signal)
    elif c.mode == "head":
        first = _read_until(proc.stdout.fileno(), b"\n", timeout).split(b"\n")[0] + b"\n"
        proc.stdout.close()
        proc.stdout = None
    with proc:
        out, err, ended = _exchange(proc, c.stdin, timeout)
        try:
            status: int | str = proc.wait(timeout if ended else 0)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)  # the client, or the cold script and its workers
            found = ANNOUNCED.search((err or out).decode(errors="replace"))
            _kill_group(int(found.group(1)) if found else None)  # a warm script's group
            more_out, more_err, _ = _exchange(proc, None, 5)
            out, err = out + more_out, err + more_err
            status = f"timed out after {timeout:.0f} s"
    return status, first + out, err


class Terminal:
    """The master side of a pty with the job shell's events beside it."""

    def __init__(self, master: int, events: int, commands: int) -> None:
        self.master, self.events, self.commands = master, events, commands
        self.screen = bytearray()
        self.said: list[str] = []  # the shell's lines
        self.partial = b""
        self.open = {master, events}

    def pump(self, until: Callable[[], bool], seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not until() and self.open and time.monotonic() < deadline:
            for fd in select.select(list(self.open), [], [], max(deadline - time.monotonic(), 0))[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: no process has the terminal open any more
                    chunk = b""
                if not chunk:
                    self.open.discard(fd)
                elif fd == self.master:
                    self.screen += chunk
                else:
                    *lines, self.partial = (self.partial + chunk).split(b"\n")
                    self.said += [line.decode() for line in lines]
        return until()

    def event(self, word: str) -> str | None:
        return next((line.split()[-1] for line in self.said if line.startswith(word + " ")), None)

    def ended(self) -> bool:
        return self.event("exit") is not None and self.master not in self.open

    def step(self, action: str, arg: object) -> None:
        if action == "wait":  # and then as long as a person takes to react: the script is past its print
            assert self.pump(lambda: str(arg).encode() in self.screen, 10), f"no {arg!r} on the terminal"
            self.pump(lambda: False, SETTLE_S)
        elif action == "type":
            os.write(self.master, str(arg).encode())
        elif action == "resize":
            rows, cols = arg  # type: ignore[misc]
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        elif action == "suspend":
            os.write(self.master, b"\x1a")
            if self.pump(lambda: "stopped" in self.said, 3):
                self.pump(lambda: False, 0.1)  # what was on its way when it stopped
                before = len(self.screen)
                self.pump(lambda: False, 0.4)
                self.said.append("output while stopped" if len(self.screen) > before else "quiet while stopped")
                os.write(self.commands, b"fg\n")


def run_in_terminal(c: Case, command: list[str], cwd: Path, env: dict[str, str], timeout: float,
                    job_shell: Path) -> tuple:
    """(status, what the terminal showed, the shell's other events) of one launch as a foreground job."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    events_r, events_w = os.pipe()
    commands_r, commands_w = os.pipe()
    shell = subprocess.Popen([PY, "-I", str(job_shell), str(events_w), str(commands_r), *command],
                             cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                             pass_fds=(events_w, commands_r), preexec_fn=c.setup)
    for fd in (slave, events_w, commands_r):
        os.close(fd)
    term = Terminal(master, events_r, commands_w)
    try:
        for action, arg in c.keys:
            term.step(action, arg)
        term.pump(term.ended, timeout)
    finally:
        if not term.ended():
            found = ANNOUNCED.search(term.screen.decode(errors="replace"))
            for pid in (term.event("pid"), shell.pid, found.group(1) if found else None):
                _kill_group(int(pid) if pid else None)
        shell.wait(10)
        for fd in (master, events_r, commands_w):
            os.close(fd)
    code = term.event("exit")
    status: int | str = int(code) if code is not None else f"timed out after {timeout:.0f} s"
    return status, bytes(term.screen), tuple(line for line in term.said if not line.startswith(("pid ", "exit ")))


def launch(c: Case, lab: Lab, warm: bool, timeout: float) -> Run:
    cwd = lab.folder / c.cwd
    env = {**lab.env, **dict(c.env)}
    command = [PY, *(arg.replace("{cases}", str(lab.folder)) for arg in c.argv)]
    if warm:
        command = [*CLIENT, *command]
    started = time.monotonic()
    shell: tuple[str, ...] = ()
    if c.mode == TERMINAL:
        status, out, shell = run_in_terminal(c, command, cwd, env, timeout, lab.folder / "_job_shell.py")
        err = b""
    elif c.mode == "varies":
        runs = [run_with_pipes(c, command, cwd, env, timeout) for _ in range(2)]
        status, err = runs[0][0], runs[0][2]
        out = _variation(runs[0][1], runs[1][1]).encode()
    else:
        status, out, err = run_with_pipes(c, command, cwd, env, timeout)
    elapsed = time.monotonic() - started
    files = {}
    for name in c.outputs:
        path = cwd / name
        files[name] = path.read_text() if path.exists() else "(not written)"
        path.unlink(missing_ok=True)
    return settle(c, status, out.decode(errors="backslashreplace"), err.decode(errors="backslashreplace"), files,
                  shell, elapsed)


def _variation(first: bytes, second: bytes) -> str:
    """Per "label: value" line of two runs: whether the value changed."""
    pairs = zip(first.decode().splitlines(), second.decode().splitlines(), strict=False)
    return "".join(f"{a.split(':')[0]}: {'varies' if a != b else 'repeats'}\n" for a, b in pairs)


def settle(c: Case, status: int | str, out: str, err: str, files: dict[str, str], shell: tuple[str, ...],
           elapsed: float) -> Run:
    """The run as compared: the client's own line taken out (and noted), addresses made equal;
    nothing else, but what a case says (a timing-dependent repeated line; TensorFlow's
    load-time log lines, which a warm child, whose TensorFlow was loaded by the server, does not print)."""
    warm_pid = refusal = None
    stream = "stdout" if c.mode in (TERMINAL, "merged") else "stderr"
    text = out if stream == "stdout" else err
    if found := ANNOUNCED.search(text):
        warm_pid = int(found.group(1))
        text = text[:found.start()] + text[found.end():]
    if found := REFUSED.search(text):
        refusal = found.group(1)
        text = text[:found.start()] + text[found.end():]
    text = SERVER_STARTED.sub("", text, count=1)
    out, err = (text, err) if stream == "stdout" else (out, text)
    out, err = ADDRESS.sub("0x…", out), ADDRESS.sub("0x…", err)
    if c.repeats:  # the terminal's echo of Ctrl+Z lands among them, even inside a line
        out = re.sub(rf"(?:(?:{re.escape(c.repeats)}|\^Z)\r?\n?)+", c.repeats + "…\n", out)
    if c.tf_import_log:
        out, err = TF_IMPORT_LOG.sub("", out), TF_IMPORT_LOG.sub("", err)
    out, err = ABSL_PREFIX.sub(r"\1 <time> <thread> ", out), ABSL_PREFIX.sub(r"\1 <time> <thread> ", err)
    if len(out) > BIG:
        out = f"{len(out)} characters, sha256 {hashlib.sha256(out.encode()).hexdigest()}"
    return Run(Seen(status, out, err, files, shell), elapsed, warm_pid, refusal)

