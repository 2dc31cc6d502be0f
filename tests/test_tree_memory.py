"""The memory a run is charged: its process tree, less a warm server its launch started.

A warm launch that has to start its server has the server as its child until it ends, and the
server's import of TensorFlow is not the script's memory (seen in the window: the first warm
launch of a matmul script peaked at 1.02 GiB, the second at 261 MiB, cold at 553 MiB). Real
processes here: a launcher whose child is a stand-in server (the server's command line, a
session of its own) holding 300 MB.
"""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from tflaunch.core.run.process_tree import tree_rss
from tflaunch.core.run.sampling import ResourceSampler
from tflaunch.core.run.warm.warm_servers import FORKSERVER

MB = 1 << 20
SERVER = "b = b'x' * (300 << 20); print('held', flush=True); import time; time.sleep(60)"


def _launcher(server_args: list[str], new_session: bool) -> subprocess.Popen:
    code = (f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', {SERVER!r}, *{server_args!r}], "
            f"start_new_session={new_session}, stdout=subprocess.PIPE); p.stdout.readline(); print('ready', "
            "flush=True); time.sleep(60)")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def _sampled(pid: int) -> int:
    sampler = ResourceSampler(pid)
    first = sampler.sample()
    assert first is not None
    return first[0]


def test_a_warm_server_started_by_the_launch_is_not_the_run_s_memory():
    launcher = _launcher([str(FORKSERVER), "--socket", "/tmp/x.sock"], new_session=True)
    try:
        assert launcher.stdout is not None and launcher.stdout.readline().strip() == "ready"
        assert tree_rss(launcher.pid) > 300 * MB, "the stand-in server holds its 300 MB"
        assert _sampled(launcher.pid) < 100 * MB, "the server's memory was charged to the run"
    finally:
        _end(launcher)


def test_a_helper_with_that_command_line_but_no_session_of_its_own_is_counted():
    """A script forked from a server has the server's command line but not its session: it is
    the run's own, as is any helper of the run."""
    launcher = _launcher([str(FORKSERVER), "--socket", "/tmp/x.sock"], new_session=False)
    try:
        assert launcher.stdout is not None and launcher.stdout.readline().strip() == "ready"
        assert _sampled(launcher.pid) > 300 * MB
    finally:
        _end(launcher)


def _end(launcher: subprocess.Popen) -> None:
    for proc in psutil.Process(launcher.pid).children(recursive=True):
        proc.kill()
    launcher.kill()
    launcher.wait(10)
    time.sleep(0.05)
