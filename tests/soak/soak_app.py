"""Soak: many runs from one app instance, then what they left behind.

The real MainWindow, offscreen, driven through its Run and Cancel actions as a user at
the toolbar would. Two runs in eleven are real TensorFlow runs of sample:mlp (one of them
cancelled during import); the rest go to a fake interpreter (tests/fake_child.py) that
succeeds, fails, crashes by signal, or hangs until it is cancelled or times out. After a
warm-up of one cycle of every kind, processes, file descriptors, threads and RSS are
compared with the end. Targets: nothing leaked, RSS growth at most 30 MB, every run ended
as its kind should; the exit code is 1 when one is missed.

    python -m tests.soak.soak_app [--runs N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import psutil  # noqa: E402
from PySide6.QtCore import (  # noqa: E402
    QCoreApplication,
    QEvent,
    QEventLoop,
    QMessageLogContext,
    QSettings,
    QTimer,
    QtMsgType,
    qInstallMessageHandler,
)

from tests.benchmarks.common import RESULTS  # noqa: E402
from tests.builders import fake_python  # noqa: E402
from tests.fake_child import CHILD_ENV, MARKER_ENV  # noqa: E402
from tflaunch.core.paths import history_path, profiles_dir  # noqa: E402
from tflaunch.core.run.record import PhaseState, RunRecord, RunStatus  # noqa: E402
from tflaunch.core.settings.config import LaunchConfig  # noqa: E402
from tflaunch.core.store.history import History  # noqa: E402
from tflaunch.core.store.profiles import ProfileStore  # noqa: E402
from tflaunch.gui.app import create_app  # noqa: E402
from tflaunch.gui.shell.main_window import MainWindow  # noqa: E402

RSS_GROWTH_LIMIT = 30_000_000  # bytes
CANCEL_DELAY_MS = 200  # after the phase to cancel in has started
STUCK_S = 300  # a run still going after this is a failure of the soak itself
PROGRESS_EVERY = 20
MB = 1_000_000


@dataclass(frozen=True)
class Kind:
    """One way a run goes: what the child does and how the run must end."""

    name: str
    child: str  # the fake interpreter's TFLAUNCH_FAKE_CHILD (tests/fake_child.py)
    expected: RunStatus
    cancel_in: str | None = None  # the soak presses Cancel shortly after this phase starts
    timeout: float = 120.0


# One cycle; the warm-up is the first. Real runs are the slow ones (seconds of import).
CYCLE = (
    Kind("real", "real", RunStatus.OK),
    Kind("ok", "ok", RunStatus.OK),
    Kind("fail", "fail", RunStatus.FAILED),
    Kind("hang, cancelled", "hang", RunStatus.CANCELLED, cancel_in="load"),
    Kind("ok", "ok", RunStatus.OK),
    Kind("real, cancelled", "real", RunStatus.CANCELLED, cancel_in="import"),
    Kind("crash", "crash", RunStatus.FAILED),
    Kind("hang, timed out", "hang", RunStatus.TIMED_OUT, timeout=1.0),
    Kind("flood", "flood", RunStatus.OK),
    Kind("error", "error", RunStatus.FAILED),
    Kind("double fork", "doublefork", RunStatus.FAILED),
)


@dataclass(frozen=True)
class Snapshot:
    fds: int
    threads: int
    tasks: int  # kernel threads of the process: Qt's and C libraries' too
    rss: int


def settle(app: QCoreApplication) -> None:
    """Let deferred deletions and queued signals run, then collect garbage."""
    for _ in range(3):
        app.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def snapshot(app: QCoreApplication) -> Snapshot:
    settle(app)
    return Snapshot(len(os.listdir("/proc/self/fd")), threading.active_count(),
                    len(os.listdir("/proc/self/task")), psutil.Process().memory_info().rss)


def leftover_processes(marker: str, grace_s: float = 3.0) -> list[str]:
    """Descendants of this process and processes naming the marker, still there after
    `grace_s` (a killed process takes a moment to be reaped by its new parent)."""
    deadline = time.monotonic() + grace_s
    while True:
        found = {p.pid: p for p in psutil.Process().children(recursive=True)}
        for proc in psutil.process_iter(["cmdline"]):
            if marker in " ".join(proc.info["cmdline"] or ()):
                found[proc.pid] = proc
        if not found or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    described = []
    for pid, proc in sorted(found.items()):
        try:
            described.append(f"{pid} ({proc.status()}): {' '.join(proc.cmdline())[:160]}")
        except psutil.Error:
            continue  # gone while we looked
    return described


def quiet_offscreen_warning(kind: QtMsgType, _context: QMessageLogContext, message: str) -> None:
    """Qt's messages, less the offscreen platform's note each time the log dock is shown."""
    if message != "This plugin does not support propagateSizeHints()":
        print(message, file=sys.stderr)


class Soak:
    """Runs one kind at a time in the window and waits for its end, as a user would."""

    def __init__(self, window: MainWindow, python: str, marker: str) -> None:
        self.window, self.python, self.marker = window, python, marker
        self.kind = CYCLE[0]
        self.record: RunRecord | None = None
        self._loop = QEventLoop()
        self._cancel = QTimer(singleShot=True, interval=CANCEL_DELAY_MS)
        self._cancel.timeout.connect(window.cancel_action.trigger)
        self._cancel_armed = False
        self._stuck = QTimer(singleShot=True, interval=STUCK_S * 1000)
        self._stuck.timeout.connect(self._loop.quit)
        window.runner.phase_changed.connect(self._on_phase_changed)
        window.run_finished.connect(self._on_run_finished)

    def run(self, kind: Kind) -> RunRecord | None:
        """The run's record once it ended; None if it was still going after STUCK_S."""
        self.kind, self.record, self._cancel_armed = kind, None, False
        extra = {CHILD_ENV: kind.child, MARKER_ENV: self.marker}
        self.window.use_config(LaunchConfig(model="sample:mlp", python=self.python, steady=3,
                                            timeout=kind.timeout, extra_env=extra))
        self.window.run_action.trigger()
        if self.record is None and not self.window.running:
            raise RuntimeError(f"the run did not start: {self.window.statusBar().currentMessage()}")
        if self.record is None:
            self._stuck.start()
            self._loop.exec()
            self._stuck.stop()
        self._cancel.stop()
        return self.record

    def _on_phase_changed(self, record: RunRecord) -> None:
        phase = self.kind.cancel_in
        if phase and not self._cancel_armed and record.phases[phase].state is PhaseState.RUNNING:
            self._cancel_armed = True
            self._cancel.start()

    def _on_run_finished(self, record: RunRecord) -> None:
        self.record = record
        self._cancel.stop()
        self._loop.quit()


def make_window(folder: Path) -> MainWindow:
    """The app's window over a private history, profiles folder and QSettings file,
    once its start-up work (GPU discovery, the interpreter check) is done."""
    os.environ["TFLAUNCH_DATA_DIR"] = str(folder / "data")
    os.environ["TFLAUNCH_CONFIG_DIR"] = str(folder / "config")
    app = create_app()
    window = MainWindow(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat),
                        History(history_path()), ProfileStore(profiles_dir()))
    window.resize(1360, 860)
    window.show()
    deadline = time.monotonic() + 60
    while window.panel.python_status.text() == "Checking…" and time.monotonic() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.01)
    return window


def status_counts(records: list[RunRecord]) -> str:
    counts = Counter(r.status.value for r in records)
    return ", ".join(f"{s.value} {counts[s.value]}" for s in RunStatus if counts[s.value])


def soak(runs: int, folder: Path, marker: str) -> tuple[dict, list[str]]:
    """Run the soak; its figures and the targets it missed."""
    app = QCoreApplication.instance()
    window = make_window(folder)
    driver = Soak(window, fake_python(folder), marker)
    records: list[RunRecord] = []
    unexpected: list[str] = []
    seconds: dict[str, list[float]] = defaultdict(list)
    started = time.monotonic()
    before = snapshot(app)
    for i in range(runs):
        kind = CYCLE[i % len(CYCLE)]
        began = time.monotonic()
        record = driver.run(kind)
        seconds[kind.name].append(time.monotonic() - began)
        if record is None:
            unexpected.append(f"run {i + 1} ({kind.name}): still running after {STUCK_S} s; soak stopped")
            window.cancel_action.trigger()
            break
        records.append(record)
        if record.status is not kind.expected:
            unexpected.append(f"run {i + 1} ({kind.name}): {record.status.value}, expected "
                              f"{kind.expected.value}: {record.headline}")
        if i + 1 == len(CYCLE):
            before = snapshot(app)  # after the warm-up: every kind has run once
        if (i + 1) % PROGRESS_EVERY == 0:
            rss = psutil.Process().memory_info().rss
            print(f"{i + 1:4d}/{runs} runs  {status_counts(records)}  RSS {rss / MB:.1f} MB"
                  f"  {time.monotonic() - started:.0f} s", flush=True)
    after = snapshot(app)
    processes = leftover_processes(marker)
    window.close()
    settle(app)

    missed = []
    if unexpected:
        missed.append(f"{len(unexpected)} run(s) did not end as their kind should")
    if processes:
        missed.append(f"{len(processes)} process(es) left behind")
    for name in ("fds", "threads", "tasks"):
        if getattr(after, name) > getattr(before, name):
            missed.append(f"{name} leaked: {getattr(before, name)} -> {getattr(after, name)}")
    if after.rss - before.rss > RSS_GROWTH_LIMIT:
        missed.append(f"RSS grew {(after.rss - before.rss) / MB:.1f} MB (target <= {RSS_GROWTH_LIMIT / MB:.0f} MB)")
    figures = {
        "runs": len(records), "warm_up_runs": len(CYCLE), "wall_s": round(time.monotonic() - started, 1),
        "statuses": dict(Counter(r.status.value for r in records)),
        "median_run_s": {name: round(statistics.median(s), 3) for name, s in seconds.items()},
        "unexpected": unexpected, "processes_left": processes,
        "after_warm_up": before.__dict__, "at_end": after.__dict__,
        "rss_growth_mb": round((after.rss - before.rss) / MB, 1),
        "missed": missed,
    }
    return figures, missed


def print_report(f: dict) -> None:
    before, after = f["after_warm_up"], f["at_end"]
    print(f"\nsoak: {f['runs']} runs in {f['wall_s']:.0f} s ({f['warm_up_runs']} of them warm-up): "
          + ", ".join(f"{status} {n}" for status, n in f["statuses"].items()))
    print("  median seconds per run: " + ", ".join(f"{k} {v:.2f}" for k, v in f["median_run_s"].items()))
    for line in f["unexpected"]:
        print(f"  unexpected: {line}")
    print(f"  processes left: {len(f['processes_left'])}")
    for line in f["processes_left"]:
        print(f"    {line}")
    for name, label in (("fds", "file descriptors"), ("threads", "Python threads"), ("tasks", "kernel tasks")):
        print(f"  {label}: {before[name]} -> {after[name]} ({after[name] - before[name]:+d})")
    print(f"  RSS: {before['rss'] / MB:.1f} MB -> {after['rss'] / MB:.1f} MB ({f['rss_growth_mb']:+.1f} MB, "
          f"target <= {RSS_GROWTH_LIMIT / MB:.0f} MB)")
    if f["missed"]:
        print("MISSED: " + "; ".join(f["missed"]))
    else:
        print("All targets met.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs in all, the warm-up included (default 200)")
    args = parser.parse_args(argv)
    if args.runs <= len(CYCLE):
        parser.error(f"--runs must be more than the {len(CYCLE)} warm-up runs")
    # The marker names the folder (and so the fake interpreter) and is in every child's
    # settings: any process whose command line has it was started for this soak.
    marker = f"tflaunch-soak-{uuid.uuid4().hex[:12]}"
    create_app()
    qInstallMessageHandler(quiet_offscreen_warning)
    with tempfile.TemporaryDirectory(prefix=f"{marker}-") as tmp:
        figures, missed = soak(args.runs, Path(tmp), marker)
    print_report(figures)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "soak.json").write_text(json.dumps(figures, indent=2))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
