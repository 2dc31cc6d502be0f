"""`tflaunch warm status|stop`: the warm-start servers this user has running."""

from __future__ import annotations

import argparse

from ..run import warm_start


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    warm = sub.add_parser("warm", help="list or stop the warm-start servers (tflaunch run --warm starts them)")
    warm.add_argument("action", choices=("status", "stop"))


def run(args: argparse.Namespace) -> int:
    if args.action == "stop":
        count = warm_start.stop_servers()
        print(f"tflaunch: stopped {count} warm server{'s' if count != 1 else ''}")
        return 0
    servers = warm_start.running_servers()
    if not servers:
        print("no warm server is running; `tflaunch run --warm --profile NAME -- python SCRIPT` starts one")
    for server in servers:
        print(f"pid {server.pid}  {server.python}  idle after {server.idle_s:g} s  (log: {server.log})")
    return 0
