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

from tests.benchmarks.common import PRINT_PROCESS_AGE, alternated_pairs, report_ratio

PAIRS = 7

IMPORT_TF = r"""
import os, sys, time
import tensorflow
""" + PRINT_PROCESS_AGE


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
        pairs = alternated_pairs(lambda: app_first_paint(config_home), import_tensorflow, PAIRS,
                                 "app first paint vs import tensorflow")
    report_ratio("app_startup", "process start to first painted window vs to end of `import tensorflow`",
                 pairs, ("app_first_paint_s", "import_tensorflow_s"), target=0.4)

if __name__ == "__main__":
    main()
