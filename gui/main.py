"""Entry point of the `tflaunch` command: the GUI, or core's headless commands.

Qt is imported only when the GUI is asked for, so `tflaunch bench` works on a cluster
node without a display.
"""

from __future__ import annotations

import argparse
import sys

from tflaunch.core import cli


def launch_gui(args: argparse.Namespace) -> int:
    from tflaunch.gui.app import run_app

    return run_app(args)


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, gui_launcher=launch_gui)


def gui_main() -> int:
    return main(["gui", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
