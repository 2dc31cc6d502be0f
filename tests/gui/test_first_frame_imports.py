"""The window's first frame is painted before the engine is imported: the session, its
driver and sampler, warm start and the sweep's session come with the first launch or sweep
(some 30 ms of imports the first paint no longer waits for, bench_app_startup). Nor is the
record: the run's data, its words, the protocol parser and every payload type they hold
come with the first run, or the first stored run listed or shown (some 70 ms); psutil with
the first run or cache clean-up, a sweep's plan with the first sweep. And it is
built without an application style sheet, which had Qt polish every widget through its
style-sheet style (some 70 ms of the window's build)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# What a launch needs and the first frame never calls.
ENGINE = ("tflaunch.core.run.session", "tflaunch.core.run.driver", "tflaunch.core.run.sampling",
          "tflaunch.core.run.warm.warm_start", "tflaunch.core.run.warm.warm_servers",
          "tflaunch.core.sweep.session", "tflaunch.gui.adapters.probe_process", "tflaunch.core.probe.anatomy")

# What a run, or a stored run read back, needs; the first frame shows neither.
RECORD = ("tflaunch.core.run.record", "tflaunch.core.run.record_data", "tflaunch.core.run.words",
          "tflaunch.core.run.events", "tflaunch.core.store.rows", "tflaunch.core.store.run_rows")

AT_FIRST_PAINT = r"""
import json, sys
import tflaunch.gui.app as app
shown = app._report_first_paint
def report(window):
    print("loaded " + json.dumps(sorted(m for m in sys.modules if m.startswith(("tflaunch.", "psutil")))), flush=True)
    print("sheet " + json.dumps(app.QApplication.instance().styleSheet()), flush=True)
    shown(window)
app._report_first_paint = report
from tflaunch.gui.main import main
sys.exit(main(["gui", "--model", "sample:mlp"]))
"""


def first_frame(tmp_path) -> dict[str, object]:
    """What the app had at its first paint, by what it printed there."""
    env = {**os.environ, "TFLAUNCH_EXIT_AFTER_PAINT": "1", "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", AT_FIRST_PAINT], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("loaded ", "sheet ")))
    return {key: json.loads(value) for key, value in said.items()}


def test_the_first_frame_is_painted_before_the_engine_and_the_record_are_imported_and_without_a_style_sheet(tmp_path):
    frame = first_frame(tmp_path)
    loaded = frame["loaded"]
    assert isinstance(loaded, list)
    assert "tflaunch.gui.shell.main_window" in loaded and "tflaunch.core.store.recorder" in loaded
    assert [m for m in ENGINE if m in loaded] == []
    assert [m for m in RECORD if m in loaded] == []
    assert "psutil" not in loaded and "tflaunch.core.sweep.plan" not in loaded
    assert frame["sheet"] == "", "an application style sheet restyles every widget the window builds"


AFTER_FIRST_PAINT = r"""
import sys
from PySide6.QtCore import QTimer
import tflaunch.gui.app as app
from tflaunch.gui.shell.import_ahead import AHEAD

class Window(app.MainWindow):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.first_painted.connect(lambda: print("at-paint " + str(sum(n in sys.modules for n in AHEAD)), flush=True))
        self.first_painted.connect(self.poll)

    def poll(self):
        if all(name in sys.modules for name in AHEAD):
            print("ahead", flush=True)
            self.close()
        else:
            QTimer.singleShot(20, self.poll)

app.MainWindow = Window
from tflaunch.gui.main import main
sys.exit(main(["gui", "--model", "sample:mlp"]))
"""


def test_what_the_first_frame_left_out_is_imported_after_it_before_a_click_needs_it(tmp_path):
    """History's first open took 180 ms, not 90 ms, with the record's imports left to it."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-c", AFTER_FIRST_PAINT], capture_output=True, text=True, timeout=120,
                          env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "at-paint 0" in lines, "none of them before the first paint"
    assert "ahead" in lines, "all of them after it"
