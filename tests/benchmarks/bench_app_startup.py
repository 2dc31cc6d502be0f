"""Start-up of the app: process start to the first painted main window, versus a minimal
PySide6 + pyqtgraph window holding one plot (process start to its first paint), alternated.

Both run as fresh processes under the same Qt platform, each printing its own process age
at its first paint, so the ratio says what tflaunch adds over the floor any pyqtgraph app
pays (interpreter, Qt, pyqtgraph, numpy). Target: median ratio at most 1.3.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.benchmarks.common import (
    PRINT_PROCESS_AGE,
    alternated_pairs,
    median_interval,
    median_ratio,
    pairs_wanted,
    report_ratio,
)

PAIRS = pairs_wanted(9)
TARGET = 1.3
# A folder holding another checkout's tflaunch/ package (as PYTHONPATH takes it): measured too,
# alternated in the same run, for before-and-after figures.
BASELINE_ENV = "TFLAUNCH_BENCH_BASELINE"
BASELINE_PAINTS: list[float] = []

MINIMAL_WINDOW = r"""
import os, sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
import pyqtgraph as pg

def report():
""" + "\n".join("    " + line for line in PRINT_PROCESS_AGE.strip().splitlines()) + r"""

class FirstPaint(QObject):
    # The first paint of any widget, reported once that frame is done: the moment the app's
    # own probe (TFLAUNCH_EXIT_AFTER_PAINT) reports, its window painting before its children.
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint:
            app.removeEventFilter(self)
            QTimer.singleShot(0, report)
        return False

app = QApplication(sys.argv[:1])
window = QMainWindow()
plot = pg.PlotWidget()
plot.plot([0, 1, 2, 3], [0, 1, 4, 9])
window.setCentralWidget(plot)
window.resize(1360, 860)  # the app's first-start size
first_paint = FirstPaint()
app.installEventFilter(first_paint)
window.show()
app.exec()
"""


def _first_paint(done: subprocess.CompletedProcess[str]) -> float:
    lines = done.stdout.strip().splitlines()
    marked = [line.split()[1] for line in lines if line.startswith("first-paint ")]
    return float(marked[0] if marked else lines[-1])


# CPU seconds (user and system) of each child, beside its wall time: the machine's other
# work stretches the wall times more than this. Filled as the children end.
CPU: dict[str, list[float]] = {}


def _run(name: str, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules from their .pyc files
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(name, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return done


def app_first_paint(home: Path, tree: str | None = None, name: str = "app") -> float:
    tflaunch = Path(sys.executable).with_name("tflaunch")
    # A user's own settings, history and profiles stay out of it (and unchanged by it).
    env = {**os.environ, "TFLAUNCH_EXIT_AFTER_PAINT": "1", "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    if tree is not None:  # another checkout's tflaunch package, ahead of this one's
        env["PYTHONPATH"] = tree
    return _first_paint(_run(name, [str(tflaunch), "gui", "--model", "sample:mlp"], env))


def minimal_window() -> float:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return _first_paint(_run("minimal", [sys.executable, "-c", MINIMAL_WINDOW], env))


def main() -> None:
    baseline = os.environ.get(BASELINE_ENV)
    with tempfile.TemporaryDirectory() as home:
        if baseline:
            # Another checkout alternated with this one and the minimal window: before and after, one run.
            def both() -> float:
                before = app_first_paint(Path(home), baseline, "baseline")
                BASELINE_PAINTS.append(before)
                return app_first_paint(Path(home))
            pairs = alternated_pairs(both, minimal_window, PAIRS, "app (and baseline) vs minimal window")
        else:
            pairs = alternated_pairs(lambda: app_first_paint(Path(home)), minimal_window, PAIRS,
                                     "app first paint vs minimal PySide6 + pyqtgraph window")
    report_ratio("app_startup", "process start to first painted window: tflaunch vs a minimal "
                 "PySide6 + pyqtgraph window with one plot", pairs,
                 ("app_first_paint_s", "minimal_window_s"), target=TARGET)
    ratio = median_ratio(pairs)
    interval = median_interval([a / b for a, b in pairs])
    cpu = {name: statistics.median(times) for name, times in CPU.items()}
    print(f"app first paint: median {statistics.median(a for a, _ in pairs):.3f} s; minimal window: median "
          f"{statistics.median(b for _, b in pairs):.3f} s; median ratio {ratio:.2f}x "
          + (f"(95 % interval {interval[0]:.2f}-{interval[1]:.2f}x) " if interval else "") +
          f"({'meets' if ratio <= TARGET else 'misses'} the target of at most {TARGET}x); CPU to first paint, "
          f"median: app {cpu['app']:.3f} s, minimal {cpu['minimal']:.3f} s ({cpu['app'] / cpu['minimal']:.2f}x)")
    if baseline:
        minimal = statistics.median(b for _, b in pairs)
        before = statistics.median(BASELINE_PAINTS)
        print(f"baseline {baseline}: first paint median {before:.3f} s ({before / minimal:.2f}x the minimal "
              f"window's median), CPU {cpu['baseline']:.3f} s ({cpu['baseline'] / cpu['minimal']:.2f}x)")


if __name__ == "__main__":
    main()
