"""Scripted fake interpreters for the fault tests: cheap children that speak the probe's
protocol (or do not), then misbehave as a broken or hostile child would; and the checks
that nothing they started is left.

A fake is an executable script with this interpreter in its shebang, given as the run's
Python; it ignores the probe's arguments. Its path is unique to the test, so any process
still running it afterwards (a grandchild forked without exec shares its command line)
is one the run left behind.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil

ANSWER_CHECK = """
if sys.argv[1:2] == ["-c"]:  # the app's interpreter check, not a run: answer it and go
    print('{"python": "3", "executable": "fake", "tensorflow": "fake"}')
    sys.exit(0)
"""


def fake_python(folder: Path, body: str, name: str = "fake-python") -> str:
    """An interpreter that runs `body` with tests/fake_child.py's helpers at hand (emit,
    hello, start, end, start_until, succeed, note)."""
    helpers = Path(__file__).parents[1].joinpath("fake_child.py").read_text(encoding="utf-8")
    helpers = helpers[: helpers.index('if __name__ == "__main__":')]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\n{helpers}{ANSWER_CHECK}\n{body}\n")
    path.chmod(0o755)
    return str(path)


def read_note(folder: Path, name: str, timeout: float = 20.0) -> int:
    """What the fake noted, waiting for it to appear."""
    path = folder / name
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"the fake child never wrote {name}"
        time.sleep(0.02)
    return int(path.read_text())


def running(pid: int) -> bool:
    """Alive and not a zombie (a container's init may never reap the orphans it inherits)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def left_running(marker: str) -> list[psutil.Process]:
    """Live processes whose command line mentions `marker` (a fake's path)."""
    out = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if proc.info["status"] != psutil.STATUS_ZOMBIE and any(marker in part for part in cmdline):
            out.append(proc)
    return out


def assert_nothing_left(marker: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while left := left_running(marker):
        if time.monotonic() > deadline:
            for proc in left:
                proc.kill()
            raise AssertionError(f"processes outlived the run: {[p.pid for p in left]}")
        time.sleep(0.05)
