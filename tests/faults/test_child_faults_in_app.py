"""A broken or hostile child, seen from the app: the run ends with its reason on screen, the
window stays responsive and usable, and nothing the child started is left running."""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QTimer

from tflaunch.core.paths import history_path
from tflaunch.core.run.record import RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History

from ..builders import finished_record
from .children import assert_nothing_left, fake_python, read_note, wait_gone
from .test_child_faults import DOUBLE_FORK, HUGE_LINE

RUN_MS = 60_000


def run_with(qtbot, window, python: str, **settings):
    window.use_config(LaunchConfig(model="sample:mlp", python=python, steady=3, **settings))
    with qtbot.waitSignal(window.run_finished, timeout=RUN_MS) as finished:
        window.start_run()
    return finished.args[0]


def test_a_1e308_duration_ends_the_run_and_the_window_goes_on(qtbot, window, tmp_path):
    bad = fake_python(tmp_path / "bad", 'succeed({"load": 1e308})')
    record = run_with(qtbot, window, bad)
    assert record.status is RunStatus.FAILED
    assert window.run_view.summary.headline.text() == "Failed in Load"
    assert "never reported a usable end" in window.statusBar().currentMessage()
    assert window.run_action.isEnabled() and not window.running, "not stuck in Running…"
    window.grab()  # paints every view of the failed run
    good = fake_python(tmp_path / "good", "succeed()")
    assert run_with(qtbot, window, good).status is RunStatus.OK
    assert window.run_list.rowCount() == 2
    assert_nothing_left(bad)


def test_the_app_opens_with_an_infinite_run_in_its_history(qtbot, make_window):
    """A row stored by a version that did not check what children sent."""
    record = finished_record()
    record.phases["trace"].duration = 1e308
    record.phases["load"].duration = math.inf
    record.ready_at = 1e308
    run_id = History(history_path()).record(record, "cli")
    window = make_window()
    assert window.history_view.model.rowCount() == 1
    window.history_view.show_requested.emit(run_id)
    assert window.run_view.record.history_id == run_id
    window.grab()


def test_a_50_mb_stderr_line_does_not_stall_the_window(qtbot, window, tmp_path):
    fake = fake_python(tmp_path, f"sys.stderr.write('x' * {HUGE_LINE} + '\\n'); sys.stderr.flush()\nsucceed()")
    ticks: list[float] = []
    clock = QTimer(window)
    clock.setInterval(10)
    clock.timeout.connect(lambda: ticks.append(time.monotonic()))
    clock.start()
    record = run_with(qtbot, window, fake, timeout=60)
    clock.stop()
    assert record.status is RunStatus.OK, record.headline
    worst = max(b - a for a, b in zip(ticks, ticks[1:], strict=False))
    assert worst < 0.5, f"the event loop stalled {worst:.2f} s"
    window.log.flush()
    log = window.log.text.toPlainText()
    assert "line cut:" in log and len(log) < 100_000
    assert_nothing_left(fake)


def test_a_double_forked_grandchild_does_not_outlive_the_apps_run(qtbot, window, tmp_path):
    fake = fake_python(tmp_path, DOUBLE_FORK)
    started = time.monotonic()
    record = run_with(qtbot, window, fake, timeout=60)
    assert record.status is RunStatus.OK, record.headline
    assert time.monotonic() - started < 20, "the run waited for a grandchild holding its pipes"
    assert wait_gone(read_note(tmp_path, "grandchild")), "the grandchild survived the run"
    assert_nothing_left(fake)
