"""mypy ratchet for the GUI: its error count may fall, never rise.

core/ is checked strictly (`mypy -p tflaunch.core`); gui/ is not strict yet. This runs mypy
over tflaunch.gui with the settings in pyproject.toml ([[tool.mypy.overrides]] for
tflaunch.gui: check_untyped_defs, no strict flags), counts its errors and compares the
count with the number in .ci/mypy-gui-baseline: above it fails, below it asks for the
baseline to be lowered, so that what was fixed stays fixed.

Run by `make lint` from the repository root, after the Makefile has made the symlink tree
build/typecheck/tflaunch (see [tool.mypy] in pyproject.toml).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-gui-baseline"
COMMAND = [sys.executable, "-m", "mypy", "-p", "tflaunch.gui"]
GUI_FILES = "build/typecheck/tflaunch/gui/"


def main() -> int:
    result = subprocess.run(COMMAND, cwd=ROOT, capture_output=True, text=True)
    output = result.stdout + result.stderr
    if result.returncode not in (0, 1):  # 2: mypy itself failed (bad config, crash)
        print(output, end="")
        print(f"mypy ratchet: `{' '.join(COMMAND[1:])}` failed (exit {result.returncode})")
        return 1
    errors = [line for line in output.splitlines() if ": error: " in line]
    gui = [line for line in errors if line.startswith(GUI_FILES)]
    others = [line for line in errors if not line.startswith(GUI_FILES)]
    if others:  # core must be clean: `mypy -p tflaunch.core` says more
        print("\n".join(others))
        print(f"mypy ratchet: {len(others)} error(s) outside gui/")
        return 1
    baseline = int(BASELINE.read_text().strip())
    if len(gui) > baseline:
        print(output, end="")
        print(f"mypy ratchet: gui/ has {len(gui)} mypy errors, more than the baseline {baseline} "
              f"({BASELINE.relative_to(ROOT)}). Fix the new ones (listed above).")
        return 1
    if len(gui) < baseline:
        print(f"mypy ratchet: gui/ has {len(gui)} mypy errors, fewer than the baseline {baseline}. "
              f"Lower it so they stay fixed:\n    echo {len(gui)} > {BASELINE.relative_to(ROOT)}")
        return 0
    print(f"mypy ratchet: gui/ has {len(gui)} mypy errors, the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
