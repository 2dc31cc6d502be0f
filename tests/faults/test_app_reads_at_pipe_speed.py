"""A child that writes one 50 MB line waits for whoever reads its pipe: the app must read it
as fast as the command line does, and keep no more of the line than the command line keeps.
Found from outside: the app's time to ready was 4.8 s against the command line's 20 ms.
"""

from __future__ import annotations

import time
import tracemalloc

from PySide6.QtCore import QTimer

from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import STDERR_LINE_CHARS, STDERR_TAIL_BYTES, RunRecord, RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig

from .children import assert_nothing_left, fake_python
from .test_child_faults import HUGE_LINE
from .test_late_children import run_in_app

# What a turn of a window's event loop costs on a real display (painting, layout, its
# timers): a reader that needs one turn per pipe-full (64 KiB) makes the child wait 800 turns.
TURN_S = 0.003


def _busy_turns(qtbot) -> QTimer:
    """Every turn of the event loop costs TURN_S from now, as a window that paints does."""
    timer = QTimer()
    timer.setInterval(0)
    timer.timeout.connect(lambda: time.sleep(TURN_S))
    timer.start()
    return timer


def test_the_app_reads_a_50_mb_line_at_the_pipes_speed_and_keeps_a_bounded_tail(qtbot, tmp_path):
    fake = fake_python(tmp_path, f"sys.stderr.write('x' * {HUGE_LINE} + '\\n'); sys.stderr.flush()\nsucceed()")
    config = LaunchConfig(model="sample:mlp", python=fake, steady=3, timeout=60)
    cli = run_sessions([ProbeSession(config)])[0]
    busy = _busy_turns(qtbot)
    tracemalloc.start()
    try:
        app = run_in_app(qtbot, config)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        busy.stop()
    assert cli.status is RunStatus.OK and app.status is RunStatus.OK, app.headline
    assert cli.time_to_ready is not None and app.time_to_ready is not None
    assert app.time_to_ready < 5 * cli.time_to_ready + 0.1, \
        f"time to ready: app {app.time_to_ready:.3f} s, command line {cli.time_to_ready:.3f} s"
    for record in (cli, app):
        _assert_bounded(record)
    assert peak < 8 << 20, f"the app held {peak >> 20} MiB while reading a {HUGE_LINE >> 20} MiB line"
    assert_nothing_left(fake)


def _assert_bounded(record: RunRecord) -> None:
    tail = list(record.stderr_tail)
    assert sum(len(line.encode()) for line in tail) <= STDERR_TAIL_BYTES
    assert tail[0].startswith("x" * STDERR_LINE_CHARS) and "line cut" in tail[0]
    assert len(tail[0]) < 2 * STDERR_LINE_CHARS
