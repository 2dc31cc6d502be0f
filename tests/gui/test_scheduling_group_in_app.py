"""The app starts a measured program as the command line does: in the app's session (its
kernel autogroup, the scheduling group of a session), in a process group of its own, which
cancel ends whole. QProcess could only give it a session of its own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import psutil

from tflaunch.core.run.record import RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.gui.adapters.probe_process import ProbeProcess

from ..test_scheduling_group import FACTS, own_autogroup

SLEEPER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open("child.pid", "w").write(str(child.pid))
time.sleep(120)
"""


def test_the_apps_program_runs_in_the_apps_session_in_a_group_of_its_own(qtbot, tmp_path: Path) -> None:
    (tmp_path / "facts.py").write_text(FACTS)
    process = ProbeProcess(ProbeSession(LaunchConfig(program=("python", "facts.py"), until="exit",
                                                     workdir=str(tmp_path), timeout=60)))
    with qtbot.waitSignal(process.finished, timeout=60_000) as finished:
        process.start()
    record = finished.args[0]
    assert (tmp_path / "facts.json").exists(), (record.status_line(), list(record.stderr_tail), record.exit_code)
    facts = json.loads((tmp_path / "facts.json").read_text())
    assert facts["sid"] == os.getsid(0), "a session of its own: scheduled apart from the app"
    assert facts["autogroup"] == own_autogroup()
    assert facts["pgid"] == facts["pid"] != os.getpgrp()
    assert finished.args[0].exit_code == 0 and not process.running


def test_cancel_ends_the_programs_whole_group(qtbot, tmp_path: Path) -> None:
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    process = ProbeProcess(ProbeSession(LaunchConfig(program=("python", "sleeper.py"), until="exit",
                                                     workdir=str(tmp_path), timeout=100)))
    process.start()
    qtbot.waitUntil(lambda: bool((tmp_path / "child.pid").exists() and (tmp_path / "child.pid").read_text()),
                    timeout=30_000)
    child = int((tmp_path / "child.pid").read_text())
    with qtbot.waitSignal(process.finished, timeout=30_000) as finished:
        process.cancel()
    assert finished.args[0].status is RunStatus.CANCELLED
    qtbot.waitUntil(lambda: _gone(child), timeout=10_000)  # the program's own child, with its group


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
