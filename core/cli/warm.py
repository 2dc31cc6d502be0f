"""`tflaunch warm status|stop`: the warm-start servers this user has running."""

from __future__ import annotations

import argparse

from ..run.warm import warm_servers
from ..units import format_bytes, format_duration


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    warm = sub.add_parser("warm", help="list or stop the warm-start servers (tflaunch run --warm starts them)")
    warm.add_argument("action", choices=("status", "stop"))


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "stop":
            count = warm_servers.stop_servers()
            print(f"tflaunch: stopped {count} warm server{'s' if count != 1 else ''}")
            return 0
        servers = warm_servers.running_servers()
    except warm_servers.WarmStartError as exc:
        print(f"tflaunch: {exc}")
        return 2
    if not servers:
        print("no warm server is running; `tflaunch run --warm --profile NAME -- python SCRIPT` starts one")
        return 0
    total = sum(s.memory for s in servers)
    print(f"{len(servers)} warm server{'s' if len(servers) != 1 else ''}, {format_bytes(total)} resident "
          f"(at most {warm_servers.MAX_SERVERS}; the oldest idle is stopped first)")
    for server in servers:
        if server.running:
            doing = f"running {server.running} script{'s' if server.running != 1 else ''}"
        elif server.idle_s is None:
            doing = "not answering"
        else:
            left = max(server.idle_limit_s - server.idle_s, 0.0)
            doing = f"idle {format_duration(server.idle_s)} (ends in {format_duration(left)})"
        print(f"pid {server.pid}  {format_bytes(server.memory)}  {doing}  {server.served} launched  "
              f"{server.python}  (log: {server.log})")
    return 0
