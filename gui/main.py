"""Entry point of the `tflaunch` command: the GUI, or core's headless commands.

Qt is imported only when the GUI is asked for, so `tflaunch bench` works on a cluster
node without a display.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tflaunch.core.cli import main as cli


def launch_gui(args: argparse.Namespace) -> int:
    # Before Qt is imported: a platform that cannot start aborts the process in Qt's words.
    from tflaunch.gui.qt_platform import platform_problem

    problem = platform_problem(os.environ)
    if problem:
        print(f"tflaunch: {problem}", file=sys.stderr)
        return 1
    _import_core_first()
    from tflaunch.gui import pyside_source_check

    pyside_source_check.install()  # before pyqtgraph and the window's modules are imported
    from tflaunch.gui.app import run_app

    return run_app(args)


# The core modules the window's first frame imports, led by the ones that import the rest.
_CORE_FOR_THE_WINDOW = ("cli.arguments", "store.history", "store.profiles", "store.recorder",
                        "run.launch_check", "run.gpus.nvml", "run.interpreters.interpreter",
                        "run.interpreters.interpreter_verdict", "run.anatomy", "run.model_facts", "run.reads",
                        "probe.process", "report.subjects", "report.nesting", "report.imports")


def _import_core_first() -> None:
    """Core's modules before Qt's: once PySide6 is imported, its import hook (shiboken's
    feature check) looks into every module imported after it, which cost the first paint
    some 40 ms of CPU for modules that never touch Qt."""
    import importlib

    for name in _CORE_FOR_THE_WINDOW:
        importlib.import_module(f"tflaunch.core.{name}")


def render_review(review, path: Path, fmt: str, scale: int) -> None:
    """Draw a review image without a display, on a cluster node or in CI alike."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from tflaunch.gui.app import create_app
    from tflaunch.gui.review.review_image import write

    create_app()
    write(review, path, fmt, scale)


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, gui_launcher=launch_gui, review_renderer=render_review)


def gui_main() -> int:
    return main(["gui", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
