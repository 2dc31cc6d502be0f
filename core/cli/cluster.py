"""Cluster sweeps from the command line: `tflaunch sweep ... --on slurm`, then
`tflaunch sweep status|merge|resubmit|cancel DIR`, and `tflaunch trial DIR INDEX`, what
each array task runs on its node."""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from ..cluster import status as cluster_status
from ..cluster.folder import FolderError, NodeType, SweepFolder, create, load
from ..cluster.merge import NodeTypeSweep, merge, most_at_once, node_type_comparison, node_type_winner
from ..cluster.preflight import CheckError
from ..cluster.slurm import SlurmError
from ..cluster.submit import CHECK_TIMEOUT_S, cancel, resubmit, submit
from ..cluster.trial import run_trial
from ..paths import profiles_dir
from ..store.history import HistoryError
from ..store.profiles import ProfileError, ProfileStore
from ..sweep.plan import Candidate, SweepPlan
from ..sweep.report import results_json, results_table
from .command_tools import open_history, say

ACTIONS = {"status": "where each trial stands: pending, running, done, failed, cancelled, lost",
           "merge": "import the results into this machine's run history (twice gives the same rows), "
                    "with a table and verdict per node type",
           "resubmit": "run the failed, lost and cancelled trials again",
           "cancel": "cancel the sweep's jobs (scancel)"}
DEFAULT_CHECK_TIMEOUT_S = CHECK_TIMEOUT_S


def add_sweep_options(sweep: argparse.ArgumentParser) -> None:
    """`tflaunch sweep`'s options for running on a cluster."""
    group = sweep.add_argument_group(
        "on a Slurm cluster", "Expand the plan into --shared-dir, check a node of each type, then submit one job "
        "array per GPU type. Follow it with `tflaunch sweep status DIR`, `merge DIR`, `resubmit DIR`, `cancel DIR`.")
    group.add_argument("--on", choices=("local", "slurm"), default="local",
                       help="where the trials run (default local: this machine, one after another)")
    group.add_argument("--partition", help="the Slurm partition of every job")
    group.add_argument("--gres", help="what each trial asks for, such as gpu:a100:1 (default: gpu:TYPE:1 per "
                                      "--gpu-types, none without it)")
    group.add_argument("--gpu-types", type=_types, default=[], metavar="TYPE[,TYPE...]",
                       help="one array per GPU type (a100,h100), each with its own verdict")
    group.add_argument("--max-parallel", type=_positive, metavar="K", help="trials of an array running at once")
    group.add_argument("--shared-dir", type=Path, default=Path("tflaunch-sweeps"),
                       help="a folder this machine and the nodes both see; the sweep's folder is made inside it "
                            "(default ./tflaunch-sweeps)")
    group.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                       help="passed to every sbatch (repeatable): --sbatch-arg=--time=00:30:00")
    group.add_argument("--check-timeout", type=_seconds, default=DEFAULT_CHECK_TIMEOUT_S, metavar="S",
                       help=f"how long the check job may wait for a node (default {DEFAULT_CHECK_TIMEOUT_S:.0f} s)")


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    trial = sub.add_parser("trial", help="run one trial of a cluster sweep (what each Slurm array task runs)")
    trial.add_argument("folder", type=Path, help="the sweep's folder")
    trial.add_argument("index", type=int, help="the trial's index ($SLURM_ARRAY_TASK_ID)")
    for action, text in ACTIONS.items():
        parser = sub.add_parser(f"sweep-{action}", prog=f"tflaunch sweep {action}", help=argparse.SUPPRESS,
                                description=text[:1].upper() + text[1:] + ".")
        parser.add_argument("folder", type=Path, help="the sweep's folder (printed when it was submitted)")
        if action in ("status", "merge"):
            parser.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
        if action == "merge":
            parser.add_argument("--save-winner", metavar="NAME",
                                help="save a node type's winner as a launch profile (with --node-type when the "
                                     "sweep ran on several)")
            parser.add_argument("--node-type", help="the node type whose winner --save-winner saves")


def cluster_argv(argv: list[str]) -> list[str]:
    """`sweep status DIR` -> `sweep-status DIR`: the actions are commands of their own."""
    if len(argv) >= 2 and argv[0] == "sweep" and argv[1] in ACTIONS:
        return [f"sweep-{argv[1]}", *argv[2:]]
    return argv


def _types(text: str) -> list[str]:
    types = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in types if not t.replace("-", "").replace("_", "").replace(".", "").isalnum()]
    if not types or bad:
        raise argparse.ArgumentTypeError(f"expected GPU types such as a100,h100, not {text!r}")
    return list(dict.fromkeys(types))


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of trials of 1 or more, not {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:  # nan: the check job would be waited for for ever
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, such as 600, not {text!r}")
    return seconds


def node_types(args: argparse.Namespace) -> list[NodeType]:
    if args.gpu_types:
        count = (args.gres or "gpu:x:1").split(":")[-1]
        count = count if count.isdigit() else "1"
        return [NodeType(t, f"gpu:{t}:{count}") for t in args.gpu_types]
    if args.gres:
        parts = args.gres.split(":")
        return [NodeType(parts[1] if len(parts) == 3 else parts[0], args.gres)]
    return [NodeType("any", None)]


def submit_sweep(args: argparse.Namespace, plan: SweepPlan, candidates: list[Candidate]) -> int:
    """`tflaunch sweep --on slurm`: expand, check, submit; the folder to follow it with."""
    if getattr(args, "save_winner", None) or getattr(args, "save_profile", None) or getattr(args, "warm", False):
        say("--save-winner, --save-profile and --warm are not for a cluster: save a winner with "
            "`tflaunch sweep merge DIR --save-winner NAME` once the trials are done.")
        return 2
    options: dict[str, Any] = {"partition": args.partition, "max_parallel": args.max_parallel,
                               "sbatch_args": args.sbatch_arg, "cwd": os.getcwd(), "gres": args.gres}
    try:
        folder = create(args.shared_dir.resolve(), plan, candidates, node_types(args), options)
        say(f"sweep folder {folder.path}: {plan.describe(len(candidates))} (on Slurm racing is off: an array "
            "does not wait for one result to choose the next trial); each node type's trials shuffled per round; "
            f"{len(folder.indices)} trials on {len(folder.node_types)} node type"
            + ("s" if len(folder.node_types) > 1 else ""))
        jobs = submit(folder, args.check_timeout, say)
    except (FolderError, SlurmError, CheckError) as exc:
        say(str(exc))
        return 1
    for name, job in jobs.items():
        say(f"submitted {name}: job {job}")
    print(folder.path)
    quoted = shlex.quote(str(folder.path))  # a command to paste into a shell, whatever the path holds
    say(f"follow it with `tflaunch sweep status {quoted}`, then `tflaunch sweep merge {quoted}`")
    return 0


def run_trial_command(args: argparse.Namespace) -> int:
    status, line = run_trial(args.folder, args.index)
    print(f"tflaunch: {line}", file=sys.stderr if status else sys.stdout, flush=True)
    return status


def action_command(args: argparse.Namespace) -> int:
    action = args.command.removeprefix("sweep-")
    try:
        folder = load(args.folder.resolve())
        if action == "cancel":
            cancelled = cancel(folder)
            say(f"cancelled job{'s' if len(cancelled) != 1 else ''} {', '.join(cancelled)}" if cancelled
                else "nothing to cancel")
            return 0
        if action == "merge":  # needs only the files: a machine that sees the folder but not Slurm merges
            states, note = cluster_status.states_from_files_if_need_be(folder)
            if note:
                say(note)
        else:
            states = cluster_status.trial_states(folder)
        if action == "status":
            return _print_status(folder, states, args.json)
        if action == "resubmit":
            again, jobs = resubmit(folder, states, on_wait=say)
            if not again:
                say("nothing to resubmit: " + cluster_status.summary_line(states))
                return 0
            say(f"resubmitted {len(again)} trial{'s' if len(again) != 1 else ''} ({', '.join(map(str, again))}): "
                + ", ".join(f"{name} job {job}" for name, job in jobs.items()))
            return 0
        return _merge(folder, states, args)
    except (FolderError, SlurmError, CheckError) as exc:
        say(str(exc))
        return 1


def _print_status(folder: SweepFolder, states: list[cluster_status.TrialState], as_json: bool) -> int:
    if as_json:
        print(json.dumps({"folder": str(folder.path), "counts": cluster_status.counts(states),
                          "trials": [{"index": s.index, "node_type": s.node_type, "setting": s.candidate,
                                      "state": s.state, "detail": s.detail} for s in states]}, indent=2))
        return 0
    width = max((len(s.candidate) for s in states), default=7)
    print(f"{'trial':>5}  {'node type':<10}  {'setting':<{width}}  state      detail")
    for s in states:
        print(f"{s.index:>5}  {s.node_type:<10}  {s.candidate:<{width}}  {s.state:<9}  {s.detail}")
    print(cluster_status.summary_line(states))
    return 0


def _merge(folder: SweepFolder, states: list[cluster_status.TrialState], args: argparse.Namespace) -> int:
    history, problem = open_history()
    if history is None:
        say(f"the results cannot be merged: {problem}")
        return 1
    try:
        parts = merge(folder, states, history)
    except HistoryError as exc:
        say(f"the results cannot be merged: {exc}")
        return 1
    if args.json:
        print(json.dumps([{"node_type": p.node_type, "gpu_models": p.gpu_models, "hosts": p.hosts,
                           **results_json(p.sweep, p.history_id, "done")} for p in parts], indent=2))
    else:
        for part in parts:
            print(f"== {part.label}, on {', '.join(part.hosts) or 'no node yet'} (history sweep {part.history_id})")
            print(results_table(part.sweep) + "\n")
    if not folder.plan.axes and (line := node_type_comparison(parts, folder.plan.objective)):
        print(line)
    crowd, host = most_at_once(states)
    if crowd > 1:
        say(f"warning: up to {crowd} trials ran at once on {host}; they shared its cores and storage, so their "
            "times include that contention. For start-up alone, give --max-parallel 1 or "
            "--sbatch-arg=--exclusive.")
    say(f"merged: {sum(p.added for p in parts)} runs added, {sum(p.replaced for p in parts)} replaced; "
        + cluster_status.summary_line(states))
    if args.save_winner:
        return _save_winner(args.save_winner, args.node_type, parts, history)
    return 0


def _save_winner(name: str, node_type: str | None, parts: list[NodeTypeSweep], history: Any) -> int:
    if node_type is None and len(parts) > 1:
        say(f"the sweep ran on {len(parts)} node types ({', '.join(p.node_type for p in parts)}): name the one "
            "whose winner to save with --node-type.")
        return 2
    part = next((p for p in parts if node_type in (None, p.node_type)), None)
    if part is None or part.history_id is None:
        say(f"no node type {node_type!r} in this sweep: it ran on {', '.join(p.node_type for p in parts)}.")
        return 2
    try:
        profile = node_type_winner(name, part, history)
        path = ProfileStore(profiles_dir()).save(profile, overwrite=True)
    except (ProfileError, OSError, ValueError, HistoryError) as exc:
        say(f"profile not saved: {exc}")
        return 1
    say(f"saved the winner on {part.label} as profile {name} ({path})")
    return 0
