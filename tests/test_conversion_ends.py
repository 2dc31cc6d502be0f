"""A conversion that hangs ends as every run's child does: at its timeout, on cancel and on
Ctrl+C, with everything in its process group, not its first process alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from tflaunch.core.run import formats
from tflaunch.core.run.formats import ConversionError, convert


def _hanging_python(tmp_path: Path) -> tuple[Path, Path]:
    """A stand-in interpreter that starts a helper in its group, then hangs; and where it
    writes the helper's pid."""
    pidfile = tmp_path / "helper.pid"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}.tmp\nmv {pidfile}.tmp {pidfile}\nexec sleep 300\n")
    fake.chmod(0o755)
    return fake, pidfile


def _helper(pidfile: Path, within: float = 30.0) -> int:
    deadline = time.monotonic() + within
    while not pidfile.exists():
        assert time.monotonic() < deadline, "the stand-in never started its helper"
        time.sleep(0.05)
    return int(pidfile.read_text())


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _kill(pidfile: Path) -> None:
    if pidfile.exists():
        try:
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def test_a_conversion_that_hangs_is_ended_at_its_timeout_with_its_whole_group(tmp_path, monkeypatch):
    fake, pidfile = _hanging_python(tmp_path)
    monkeypatch.setattr(formats, "CONVERT_TIMEOUT_S", 1.0)
    try:
        started = time.monotonic()
        with pytest.raises(ConversionError, match="took longer than 1 s"):
            convert(str(fake), "sample:mlp", ["h5"], tmp_path / "out")
        assert time.monotonic() - started < 20
        assert _gone(_helper(pidfile)), "the helper the conversion started outlived its timeout"
    finally:
        _kill(pidfile)


def test_a_conversion_is_cancelled_from_another_thread_with_its_whole_group(tmp_path):
    from tflaunch.core.run.formats import Conversion

    fake, pidfile = _hanging_python(tmp_path)
    conversion = Conversion(str(fake), "sample:mlp", ["h5"], tmp_path / "out")
    helper: list[int] = []

    def cancel_once_started() -> None:
        helper.append(_helper(pidfile))
        conversion.cancel()

    canceller = threading.Thread(target=cancel_once_started)
    try:
        started = time.monotonic()
        canceller.start()
        with pytest.raises(ConversionError, match="cancelled"):
            conversion.run()
        assert time.monotonic() - started < 20, "cancel did not end the conversion"
        canceller.join(5)
        assert helper and _gone(helper[0]), "the helper the conversion started outlived its cancel"
    finally:
        _kill(pidfile)


def test_ctrl_c_during_a_conversion_ends_its_whole_group_and_reaches_the_caller(tmp_path):
    fake, pidfile = _hanging_python(tmp_path)
    script = textwrap.dedent(f"""
        import os, signal, threading, time
        from pathlib import Path
        from tflaunch.core.run.formats import convert

        def interrupt():
            while not Path({str(pidfile)!r}).exists():
                time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        try:
            convert({str(fake)!r}, "sample:mlp", ["h5"], Path({str(tmp_path / "out")!r}))
        except KeyboardInterrupt:
            print("interrupted")
    """)
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        assert "interrupted" in done.stdout, done.stderr
        assert _gone(_helper(pidfile)), "the helper the conversion started outlived Ctrl+C"
    finally:
        _kill(pidfile)
