"""The `tflaunch` command line: headless commands, and the `gui` command's arguments.

The GUI itself lives in tflaunch.gui; its entry point hands this module a launcher, so
core stays importable (and `tflaunch bench` runs) where Qt is not installed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from . import bench, devices, history, profiles, report, sample, sweep
from .arguments import add_config_arguments, failure_json

GuiLauncher = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """Arguments argparse refused; raised instead of exiting so --json can answer in JSON."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser, self.message = parser, message


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tflaunch", description="Measure and tune TensorFlow start-up.")
    sub = parser.add_subparsers(dest="command")
    bench.add_arguments(sub)
    sample.add_arguments(sub)
    profiles.add_arguments(sub)
    sweep.add_arguments(sub)
    report.add_arguments(sub)
    history.add_arguments(sub)
    devices.add_arguments(sub)
    gui = sub.add_parser("gui", help="open the app (default when no command is given)")
    add_config_arguments(gui, model_required=False)
    gui.add_argument("--run", action="store_true", help="start a run as soon as the window opens")
    return parser


def main(argv: Sequence[str] | None = None, gui_launcher: GuiLauncher | None = None,
         review_renderer: report.Renderer | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv or ["gui"])
    except UsageError as exc:
        if "--json" in argv:  # a script asked for JSON: it gets JSON, failures included
            print(json.dumps(failure_json("invalid_arguments", exc.message), indent=2))
        exc.parser.print_usage(sys.stderr)
        print(f"{exc.parser.prog}: error: {exc.message}", file=sys.stderr)
        return 2
    commands: dict[str, Callable[[argparse.Namespace], int]] = {
        "bench": bench.run, "sample": sample.run, "run": profiles.run_command,
        "profiles": profiles.profiles_command, "sweep": sweep.run,
        "report": lambda a: report.run(a, review_renderer), "history": history.run, "devices": devices.run,
    }
    if args.command in commands:
        return commands[args.command](args)
    if gui_launcher is None:
        print("tflaunch: the GUI is not available here; install tflaunch with PySide6, "
              "or use `tflaunch bench`.", file=sys.stderr)
        return 2
    return gui_launcher(args)


if __name__ == "__main__":
    sys.exit(main())
