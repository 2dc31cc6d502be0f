"""A measured program is scheduled as a terminal run is: in the launcher's session (hence its
kernel autogroup, the scheduling group of a session), in a process group of its own (which
cancel and timeout end whole), and, a background job of the launcher's terminal, without
that terminal: a program that asks for a password fails at once as it does on its /dev/null
stdin, instead of being stopped by the terminal until its timeout."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import textwrap
from pathlib import Path

from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig

FACTS = textwrap.dedent("""
    import json, os, sys
    try:
        with open("/proc/self/autogroup") as f:
            autogroup = (f.read().split() or [None])[0]  # empty in the kernel's default autogroup
    except OSError:
        autogroup = None
    facts = {"pid": os.getpid(), "pgid": os.getpgrp(), "sid": os.getsid(0), "autogroup": autogroup}
    try:
        os.close(os.open("/dev/tty", os.O_RDWR))
        facts["tty"] = "opened"
    except OSError as exc:
        facts["tty"] = exc.strerror
    with open("facts.json", "w") as f:
        json.dump(facts, f)
    if len(sys.argv) > 1:
        import getpass
        getpass.getpass("password? ")
""")


def own_autogroup() -> str | None:
    """This process's autogroup, None where there is none to name: a process whose session
    was never made by setsid (PID 1's, where CI may run) is in the kernel's default
    autogroup, whose /proc file is empty."""
    try:
        return (Path("/proc/self/autogroup").read_text().split() or [None])[0]
    except OSError:
        return None


def test_a_program_runs_in_the_launchers_session_and_autogroup_in_a_group_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "facts.py").write_text(FACTS)
    config = LaunchConfig(program=("python", "facts.py"), until="exit", workdir=str(tmp_path), timeout=60)
    record = run_sessions([ProbeSession(config)])[0]
    assert (tmp_path / "facts.json").exists(), (record.status_line(), list(record.stderr_tail), record.exit_code)
    facts = json.loads((tmp_path / "facts.json").read_text())
    assert facts["sid"] == os.getsid(0), "a session of its own: scheduled apart from its launcher"
    assert facts["autogroup"] == own_autogroup()
    assert facts["pgid"] == facts["pid"] != os.getpgrp()  # its own group: cancel and timeout end it whole
    assert record.exit_code == 0


def test_under_a_terminal_a_password_prompt_fails_at_once_instead_of_stopping(tmp_path: Path) -> None:
    """The launcher in a terminal's session (the pty its controlling terminal), as `tflaunch
    bench` typed in a shell is; the program asks for a password through /dev/tty."""
    (tmp_path / "facts.py").write_text(FACTS)
    launcher = tmp_path / "launcher.py"
    launcher.write_text(textwrap.dedent("""
        import fcntl, sys, termios
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the pty becomes this session's terminal
        from tflaunch.core.cli.main import main
        sys.exit(main(sys.argv[1:]))
    """))
    master, slave = pty.openpty()
    try:
        bench = subprocess.run([sys.executable, str(launcher), "bench", "--json", "--no-history", "--until", "exit",
                                "--timeout", "100", "--cwd", str(tmp_path), "--", "python", "facts.py", "ask"],
                               stdin=slave, capture_output=True, text=True, start_new_session=True, timeout=200)
    finally:
        os.close(slave)
        os.close(master)
    facts = json.loads((tmp_path / "facts.json").read_text())
    assert facts["tty"] != "opened", facts  # the launcher's terminal is not the measured program's
    run = json.loads(bench.stdout)["runs"][0]
    assert run["status"] == RunStatus.FAILED.value, run  # not stopped by the terminal until it timed out
    assert "EOFError" in run["failure"]["message"], run["failure"]
