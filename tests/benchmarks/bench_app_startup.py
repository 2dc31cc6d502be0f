"""Start-up of the app: process start to the first painted main window, versus
`python -c "import tensorflow"` (process start to the end of the import), alternated.

Target: median ratio (app / import tensorflow) at most 0.4.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.benchmarks.common import median_ratio, report

PAIRS = 7

IMPORT_TF = r"""
import os, time
import tensorflow
with open("/proc/self/stat") as f:
    stat = f.read()
ticks = int(stat[stat.rindex(")") + 2:].split()[19])
print(time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
os._exit(0)
"""


def app_first_paint(config_home: str) -> float:
    tflaunch = Path(sys.executable).with_name("tflaunch")
    env = {**os.environ, "TFLAUNCH_EXIT_AFTER_PAINT": "1", "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": config_home}
    done = subprocess.run([str(tflaunch), "gui", "--model", "sample:mlp"], capture_output=True, text=True,
                          env=env, check=True, timeout=120)
    line = next(line for line in done.stdout.splitlines() if line.startswith("first-paint "))
    return float(line.split()[1])


def import_tensorflow() -> float:
    done = subprocess.run([sys.executable, "-c", IMPORT_TF], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as config_home:
        app_first_paint(config_home), import_tensorflow()  # warm the page cache for both
        pairs = []
        for i in range(PAIRS):
            if i % 2 == 0:
                app = app_first_paint(config_home)
                tf = import_tensorflow()
            else:
                tf = import_tensorflow()
                app = app_first_paint(config_home)
            pairs.append((app, tf))
            print(f"pair {i + 1}: app painted at {app:.3f} s, import tensorflow {tf:.3f} s", file=sys.stderr)
    ratio = median_ratio(pairs)
    report("app_startup", {
        "benchmark": "process start to first painted window vs to end of `import tensorflow`",
        "pairs": [{"app_first_paint_s": a, "import_tensorflow_s": b} for a, b in pairs],
        "median_ratio": ratio, "target": 0.4, "met": ratio <= 0.4,
    })


if __name__ == "__main__":
    main()
