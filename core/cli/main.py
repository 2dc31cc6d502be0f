"""The `tflaunch` command line: headless commands, and the `gui` command's arguments.

The GUI itself lives in tflaunch.gui; its entry point hands this module a launcher, so
core stays importable (and `tflaunch bench` runs) where Qt is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

# Nothing of tflaunch's is imported here at first: a Ctrl+C while the commands' modules load
# (a second or more on a cold disk) lands inside main's catch, not in a 40-line traceback.
if TYPE_CHECKING:
    from .report import Renderer

GuiLauncher = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """Arguments argparse refused; raised instead of exiting so --json can answer in JSON."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser, self.message = parser, message


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)


def _wants_json(argv: Sequence[str]) -> bool:
    """--json among the options (before `--`), as argparse reads it: abbreviated too (--js)."""
    options = argv[:argv.index("--")] if "--" in argv else argv
    return any(len(a) >= 4 and "--json".startswith(a) for a in options)


def build_parser(gui_only: bool = False) -> argparse.ArgumentParser:
    """The whole command line; with gui_only, only the `gui` command, whose start-up does not
    pay for importing every other command (sweeps, reports, history...)."""
    from .arguments import add_config_arguments

    parser = _Parser(prog="tflaunch", description="Measure and tune TensorFlow start-up.")
    sub = parser.add_subparsers(dest="command")
    if not gui_only:
        for module in _command_modules().values():
            module.add_arguments(sub)
    gui = sub.add_parser("gui", help="open the app (default when no command is given)")
    add_config_arguments(gui, model_required=False)
    gui.add_argument("--run", action="store_true", help="start a run as soon as the window opens")
    return parser


def _command_modules() -> dict[str, Any]:
    from . import (
        advise,
        bench,
        cache,
        check,
        cluster,
        devices,
        history,
        profiles,
        report,
        sample,
        serving_warmup,
        sweep,
        warm,
    )

    return {"bench": bench, "check": check, "sample": sample, "profiles": profiles, "sweep": sweep, "report": report,
            "history": history, "devices": devices, "warm": warm, "doctor": advise,
            "serving-warmup": serving_warmup, "cluster": cluster, "cache": cache}


def main(argv: Sequence[str] | None = None, gui_launcher: GuiLauncher | None = None,
         review_renderer: Renderer | None = None) -> int:
    try:
        return _main(argv, gui_launcher, review_renderer)
    except KeyboardInterrupt:  # while starting (the imports, the arguments): the last line is tflaunch's
        print("\ntflaunch: interrupted (Ctrl+C); nothing further was started.", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None, gui_launcher: GuiLauncher | None, review_renderer: Renderer | None) -> int:
    from .arguments import failure_json

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["sweep"]:
        argv = _command_modules()["cluster"].cluster_argv(argv)
    gui_only = not argv or (argv[0] == "gui" and not {"-h", "--help"} & set(argv))
    try:
        args = build_parser(gui_only).parse_args(argv or ["gui"])
    except UsageError as exc:
        if _wants_json(argv):  # a script asked for JSON: it gets JSON, failures included
            print(json.dumps(failure_json("invalid_arguments", exc.message), indent=2))
        exc.parser.print_usage(sys.stderr)
        print(f"{exc.parser.prog}: error: {exc.message}", file=sys.stderr)
        return 2
    if args.command != "gui" and args.command is not None:
        m = _command_modules()
        commands: dict[str, Callable[[argparse.Namespace], int]] = {
            "bench": m["bench"].run, "check": m["check"].run, "sample": m["sample"].run,
            "run": m["profiles"].run_command,
            "profiles": m["profiles"].profiles_command, "sweep": m["sweep"].run,
            "report": lambda a: m["report"].run(a, review_renderer), "history": m["history"].run,
            "devices": m["devices"].run, "warm": m["warm"].run, "cache": m["cache"].run,
            "doctor": m["doctor"].run, "serving-warmup": m["serving-warmup"].run,
            "trial": m["cluster"].run_trial_command, "cluster": m["cluster"].cluster_command,
            **{f"sweep-{action}": m["cluster"].action_command for action in m["cluster"].ACTIONS},
        }
        try:
            return commands[args.command](args)
        except KeyboardInterrupt:
            # Ctrl+C: the children end with their group (driver, PR_SET_PDEATHSIG); the last
            # line is tflaunch's, not a traceback through whatever was waiting.
            message = f"{args.command} interrupted (Ctrl+C); nothing further was started."
            if getattr(args, "json", False):
                print(json.dumps(failure_json("interrupted", message), indent=2))
            print(f"\ntflaunch: {message}", file=sys.stderr)
            return 130
        except BrokenPipeError:
            # `tflaunch history list | head`: the reader left. Python's advice: point stdout at
            # devnull so the flush at exit cannot raise again, and end as a piped program does.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
    if gui_launcher is None:
        print("tflaunch: the GUI is not available here; install tflaunch with PySide6, "
              "or use `tflaunch bench`.", file=sys.stderr)
        return 2
    return gui_launcher(args)


if __name__ == "__main__":
    sys.exit(main())
