"""The harness of the observed/unobserved differential test: one program of
tests/observed_cases/ run as a plain `python PROG` and as `tflaunch bench --until exit
--no-history -- python PROG` runs it (the CLI's own parser and config, the engine it drives:
ProbeSession and run_sessions), each in a fresh copy of the cases' folder, and what each run
showed, settled for what differs from run to run whoever runs it
(tests/test_observed_differential.py has the table and the tests).

Where the program's stdout is: the engine reads the child's stdout and stderr on two pipes and
hands each chunk to ProbeSession.stdout / .stderr, which merge both into the run's log (bench
prints only a failed run's last 8 log lines, as "  | " lines on stderr, and `--json` has the
exit code and a bounded, merged stderr tail). So the observed side taps the two methods: the
program's stdout and stderr bytes, apart and complete, exactly as the engine got them."""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tflaunch.core.cli.arguments import config_from_args
from tflaunch.core.cli.main import build_parser
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.launch_check import launch_check
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.run.watcher import Output
from tflaunch.core.settings.config import LaunchConfig

PY = sys.executable
CASES = Path(__file__).with_name("observed_cases")
TIMEOUT_S = 120.0
# The one place that settles what varies run to run: a duration printed by a program or by
# Keras ("12ms/step", "took 0.41 s"), object addresses, and the run's own folder.
TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|us|µs|s)(?:/step)?\b")
ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
TRACEBACK = "Traceback (most recent call last):"
# Files whose bytes say what the program computed; any other file (.keras and .h5 carry
# timestamps, checkpoints their own ids) is compared by its name.
COMPARED = (".json", ".txt", ".npy", ".csv")


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]  # after `python`, run in the cases' folder
    message: bool = False  # the last line of stderr is the program's own (sys.exit("..."))


@dataclasses.dataclass
class Seen:
    """What a run showed, after `settle`."""

    status: int | str
    stdout: str
    traceback: str  # stderr from Python's "Traceback" line on, settled; "" when none
    message: str  # the last stderr line, for a case whose last line is its own
    files: dict[str, str]  # written by the program: name -> content, digest or "written"


class Tapped(ProbeSession):
    """The engine's session as bench makes it, keeping the child's stdout and stderr apart."""

    def __init__(self, config: LaunchConfig, env: dict[str, str]) -> None:
        super().__init__(config, base_env=env)
        self.out, self.err = bytearray(), bytearray()

    def stdout(self, data: bytes) -> Output:
        self.out += data
        return super().stdout(data)

    def stderr(self, data: bytes) -> Output:
        self.err += data
        return super().stderr(data)


def bench_config(argv: tuple[str, ...], folder: Path, until: str = "exit", python: str = PY) -> LaunchConfig:
    """The settings `tflaunch bench --until UNTIL --no-history -- python ...` runs with."""
    args = build_parser().parse_args(["bench", "--until", until, "--no-history", "--python", python,
                                      "--cwd", str(folder),
                                      "--timeout", str(int(TIMEOUT_S)), "--", "python", *argv])
    config = config_from_args(args, model_required=True)
    problems = launch_check(config)
    assert not problems, [p.message for p in problems]
    return config


def observed(c: Case, folder: Path, env: dict[str, str], until: str = "exit",
             python: str = PY) -> tuple[int | str, bytes, bytes]:
    record, session = observed_record(c, folder, env, until, python)
    if session.timed_out:
        return f"timed out after {TIMEOUT_S:.0f} s", bytes(session.out), bytes(session.err)
    status = record.exit_code if record.exit_code is not None else -(record.exit_signal or 0)
    return status, bytes(session.out), bytes(session.err)


def observed_record(c: Case, folder: Path, env: dict[str, str], until: str,
                    python: str = PY) -> tuple[RunRecord, Tapped]:
    """The run's record as bench gets it, and the session that kept the program's streams."""
    session = Tapped(bench_config(c.argv, folder, until, python), env)
    return run_sessions([session])[0], session


def plain(c: Case, folder: Path, env: dict[str, str], python: str = PY) -> tuple[int | str, bytes, bytes]:
    """As the engine starts it, without the engine: no stdin, pipes, a session of its own."""
    proc = subprocess.Popen([python, *c.argv], cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return f"timed out after {TIMEOUT_S:.0f} s", out, err


def copy_of_cases(into: Path, cases: Path = CASES) -> Path:
    shutil.copytree(cases, into, ignore=shutil.ignore_patterns("__pycache__"))
    return into


def both(c: Case, tmp: Path, env: dict[str, str], python: str = PY, cases: Path = CASES) -> tuple[Seen, Seen]:
    """(plain, observed), run at the same time, each in its own copy of the folder: by default
    this interpreter and tests/observed_cases, or another stack's (tests/stacks)."""
    plain_folder, observed_folder = copy_of_cases(tmp / "plain", cases), copy_of_cases(tmp / "observed", cases)
    got: dict[str, tuple[int | str, bytes, bytes]] = {}
    thread = threading.Thread(target=lambda: got.update(plain=plain(c, plain_folder, env, python)))
    thread.start()
    try:
        got["observed"] = observed(c, observed_folder, env, python=python)
    finally:
        thread.join()
    return settle(c, *got["plain"], plain_folder, cases), settle(c, *got["observed"], observed_folder, cases)


def written(folder: Path, cases: Path = CASES) -> dict[str, str]:
    files = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_dir() or "__pycache__" in path.parts or (cases / name).exists():
            continue
        if path.suffix in COMPARED:
            data = path.read_bytes()
            files[name] = data.decode() if path.suffix != ".npy" else hashlib.sha256(data).hexdigest()
        else:
            files[name] = "written"
    return files


def settle(c: Case, status: int | str, out: bytes, err: bytes, folder: Path, cases: Path = CASES) -> Seen:
    def even(text: str) -> str:
        return ADDRESS.sub("0x…", TIMING.sub("<time>", text.replace(str(folder), "<folder>")))

    stdout, stderr = even(out.decode(errors="backslashreplace")), even(err.decode(errors="backslashreplace"))
    at = stderr.find(TRACEBACK)
    lines = stderr.rstrip("\n").splitlines()
    return Seen(status, stdout, stderr[at:] if at >= 0 else "", lines[-1] if c.message and lines else "",
                written(folder, cases))


def differences(plain_seen: Seen, observed_seen: Seen) -> str:
    """What differs, field by field, as a unified diff (plain first): the failure's message."""
    said = []
    for field in dataclasses.fields(Seen):
        a, b = getattr(plain_seen, field.name), getattr(observed_seen, field.name)
        if a != b:
            lines = [(str(x) if not isinstance(x, dict) else "\n".join(f"{k}: {v}" for k, v in x.items()))
                     .splitlines() for x in (a, b)]
            said += [f"{field.name}:", *difflib.unified_diff(*lines, "plain", "observed", lineterm="", n=1)]
    return "\n".join(said)


def user_environment() -> dict[str, str]:
    """This process's environment as a user's: nothing of tflaunch's or pytest's, buffered stdio."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("TFLAUNCH_", "PYTEST_", "PYTHONUNBUFFERED"))}
