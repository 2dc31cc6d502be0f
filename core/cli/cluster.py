"""Cluster sweeps from the command line: `tflaunch sweep ... --on slurm`, then
`tflaunch sweep status|merge|resubmit|cancel DIR`, `tflaunch trial DIR INDEX` (what each
array task runs on its node) and `tflaunch cluster sandbox up|down` (a Slurm to try it on)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from ..cluster import resources
from ..cluster import status as cluster_status
from ..cluster.folder import FolderError, SweepFolder, create, load
from ..cluster.merge import NodeTypeSweep, merge, most_at_once, node_type_comparison, node_type_winner
from ..cluster.preflight import CheckError
from ..cluster.slurm import SlurmError
from ..cluster.submit import cancel, resubmit, submit
from ..cluster.task import run_trials
from ..cluster.trial import ENDED_BY, end_with_batch_step, ended_by, slurm_signals, warned
from ..paths import profiles_dir
from ..store.history import HistoryError
from ..store.profiles import ProfileError, ProfileStore
from ..store.replaced_profiles import FOLDER
from ..store.trust import code_it_runs
from ..sweep.plan import Candidate, SweepPlan
from ..sweep.report import results_json, results_table
from .cluster_options import RESOURCES, add_resource_options, named_values, node_types, resource_values
from .cluster_options import add_sweep_options as add_sweep_options
from .command_tools import open_history, say
from .numbers import whole

ACTIONS = {"status": "where each trial stands: pending, running, done, failed, cancelled, lost",
           "merge": "import the results into this machine's run history (twice gives the same rows), "
                    "with a table and verdict per node type",
           "resubmit": "run the failed, lost and cancelled trials again (each node type checked again first)",
           "cancel": "cancel the sweep's jobs (scancel)"}


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    trial = sub.add_parser("trial", help="run one trial of a cluster sweep (what each Slurm array task runs)")
    trial.add_argument("folder", type=Path, help="the sweep's folder")
    trial.add_argument("index", type=whole, nargs="+", help="the trials' indices, run one after another")
    for action, text in ACTIONS.items():
        parser = sub.add_parser(f"sweep-{action}", prog=f"tflaunch sweep {action}", help=argparse.SUPPRESS,
                                description=text[:1].upper() + text[1:] + ".")
        parser.add_argument("folder", type=Path, help="the sweep's folder (printed when it was submitted)")
        if action in ("status", "merge"):
            parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        if action == "resubmit":
            add_resource_options(parser)  # a trial ended at its time limit gets more time
        if action == "merge":
            parser.add_argument("--save-winner", metavar="NAME",
                                help="save a node type's winner as a launch profile (with --node-type when the "
                                     "sweep ran on several); what it would run is shown and asked, as an import")
            parser.add_argument("--node-type", help="the node type whose winner --save-winner saves")
            parser.add_argument("--yes", action="store_true",
                                help="with --save-winner: accept what the profile runs and replace a profile of that "
                                     "name (kept as a dated copy); you have read the list")
    cluster = sub.add_parser("cluster", help="a single-node Slurm on this machine, to try cluster sweeps")
    cluster.add_argument("what", choices=("sandbox",))
    cluster.add_argument("action", choices=("up", "down", "status"),
                         help="up: start it and print SLURM_CONF; down: stop it and cancel its jobs")


def cluster_argv(argv: list[str]) -> list[str]:
    """`sweep status DIR` -> `sweep-status DIR`: the actions are commands of their own."""
    if len(argv) >= 2 and argv[0] == "sweep" and argv[1] in ACTIONS:
        return [f"sweep-{argv[1]}", *argv[2:]]
    return argv


def submit_sweep(args: argparse.Namespace, plan: SweepPlan, candidates: list[Candidate]) -> int:
    """`tflaunch sweep --on slurm`: expand, then submit the check jobs and the arrays that
    wait for them; returns at once with the folder to follow it with."""
    as_json = bool(getattr(args, "json", False))
    if getattr(args, "save_winner", None) or getattr(args, "save_profile", None) or getattr(args, "warm", False):
        return _refuse("--save-winner, --save-profile and --warm are not for a cluster: save a winner with "
                       "`tflaunch sweep merge DIR --save-winner NAME` once the trials are done.", as_json, 2)
    try:
        named = resources.checked(named_values(args))
        resources.check_placement(str(args.shared_dir.resolve()), args.partition,
                                  [(t.name, t.gres) for t in node_types(args)], args.sbatch_arg)
    except ValueError as exc:
        return _refuse(str(exc), as_json, 2)
    options: dict[str, Any] = {"partition": args.partition, "max_parallel": args.max_parallel,
                               "sbatch_args": args.sbatch_arg, "cwd": os.getcwd(), "gres": args.gres, **named}
    try:
        folder = create(args.shared_dir.resolve(), plan, candidates, node_types(args), options)
        say(f"sweep folder {folder.path}: {plan.describe(len(candidates))} (on Slurm racing is off: an array "
            "does not wait for one result to choose the next trial); each node type's trials shuffled per round; "
            f"{len(folder.indices)} trials on {len(folder.node_types)} node type"
            + ("s" if len(folder.node_types) > 1 else ""))
        jobs = submit(folder, say)
    except (FolderError, SlurmError, CheckError) as exc:
        return _refuse(str(exc), as_json, 1)
    for name, job in jobs.items():
        say(f"submitted {name}: job {job}")
    if as_json:
        print(json.dumps({"folder": str(folder.path), "jobs": jobs}, indent=2))
    else:
        print(folder.path)
    quoted = shlex.quote(str(folder.path))  # a command to paste into a shell, whatever the path holds
    say(f"nothing waits here: follow it with `tflaunch sweep status {quoted}`, then `tflaunch sweep merge {quoted}`")
    return 0


def _refuse(message: str, as_json: bool, code: int) -> int:
    """The reason on stderr, and one JSON document on stdout where JSON was asked for."""
    if as_json:
        print(json.dumps({"error": message}, indent=2))
    say(message)
    return code


def run_trial_command(args: argparse.Namespace) -> int:
    try:
        with slurm_signals():  # the whole task, not only its runs: Slurm's word is kept
            end_with_batch_step()
            return run_trials(args.folder, args.index, lambda status, line: print(
                f"tflaunch: {line}", file=sys.stderr if status else sys.stdout, flush=True))
    except KeyboardInterrupt:
        say(f"trial {ended_by()}; nothing further was started")
        return 143 if ENDED_BY and not warned() else 130


def cluster_command(args: argparse.Namespace) -> int:
    """`tflaunch cluster sandbox up|down|status`."""
    from ..cluster import sandbox

    try:
        if args.action == "up":
            conf = sandbox.up()
            say(f"a single-node Slurm runs on this machine (state in {conf.parent}); in your shell:")
            print(f"export SLURM_CONF={shlex.quote(str(conf))}")
            say("then `tflaunch sweep --on slurm ...`; `tflaunch cluster sandbox down` stops it")
        elif args.action == "down":
            say(sandbox.down())
        else:
            works, said = sandbox.status()
            print(f"export SLURM_CONF={shlex.quote(str(sandbox.running()))}" if works else said)
            if works:
                say(said)
            return 0 if works else 1
    except sandbox.SandboxError as exc:
        say(str(exc))
        return 1
    return 0


def action_command(args: argparse.Namespace) -> int:
    action = args.command.removeprefix("sweep-")
    as_json = bool(getattr(args, "json", False))
    try:
        folder = load(args.folder.resolve())
        if action == "cancel":
            cancelled = cancel(folder)
            say(f"cancelled job{'s' if len(cancelled) != 1 else ''} {', '.join(cancelled)}" if cancelled
                else "nothing to cancel")
            return 0
        note = None
        if action in ("merge", "status"):  # need only the files: a machine that sees the folder but not Slurm
            states, note = cluster_status.states_from_files_if_need_be(folder)
            if note:
                say(note)
        else:
            states = cluster_status.trial_states(folder)
        if action == "status":
            return _print_status(folder, states, as_json, note)
        if action == "resubmit":
            again, jobs = resubmit(folder, states, resources.checked(resource_values(args, RESOURCES)), on_wait=say)
            if not again:
                say("nothing to resubmit: " + cluster_status.summary_line(states))
                return 0
            say(f"resubmitted {len(again)} trial{'s' if len(again) != 1 else ''} ({', '.join(map(str, again))}), "
                "each node type checked again first: " + ", ".join(f"{name} job {job}" for name, job in jobs.items()))
            return 0
        return _merge(folder, states, args)
    except (FolderError, SlurmError, CheckError, ValueError) as exc:
        return _refuse(str(exc), as_json, 1)


def _print_status(folder: SweepFolder, states: list[cluster_status.TrialState], as_json: bool,
                  note: str | None) -> int:
    if as_json:
        print(json.dumps({"folder": str(folder.path), "counts": cluster_status.counts(states), "note": note,
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
        return _refuse(f"the results cannot be merged: {problem}", args.json, 1)
    try:
        parts = merge(folder, states, history)
    except HistoryError as exc:
        return _refuse(f"the results cannot be merged: {exc}", args.json, 1)
    comparison = node_type_comparison(parts, folder.plan.objective) if not folder.plan.axes else None
    still = cluster_status.still_running(states)
    if args.json:
        print(json.dumps({"parts": [{"node_type": p.node_type, "gpu_models": p.gpu_models, "hosts": p.hosts,
                                     **_json_part(p, still)} for p in parts],
                          "node_type_comparison": comparison, "still_running": still,
                          "summary": cluster_status.summary_line(states)}, indent=2))
    else:
        for part in parts:
            print(f"== {part.label}, on {', '.join(part.hosts) or 'no node yet'} (history sweep {part.history_id})")
            table = results_table(part.sweep)
            if still:  # no verdict yet: "No setting succeeded" said of trials that have not ended was wrong
                table = table.replace("No setting succeeded.", f"No result yet: {still}.")
            print(table + "\n")
        if comparison:
            print(comparison)
    if still:
        say(f"not final: {still}; merge again once they have ended")
    crowd, host = most_at_once(states)
    if crowd > 1:
        say(f"warning: {contention_advice(crowd, host, folder.options)}")
    say(f"merged: {sum(p.added for p in parts)} runs added, {sum(p.replaced for p in parts)} replaced; "
        + cluster_status.summary_line(states))
    if args.save_winner:
        return _save_winner(args.save_winner, args.node_type, parts, history, args.yes)
    return 0


def _json_part(part: NodeTypeSweep, still: str | None) -> dict[str, Any]:
    data = results_json(part.sweep, part.history_id, "partial" if still else "done")
    if still and data["verdict"] == "No setting succeeded.":
        data["verdict"] = f"No result yet: {still}."
    return data


def contention_advice(crowd: int, host: str | None, options: dict[str, Any]) -> str:
    """Trials that overlapped on one host, and what would stop it (not what was given already)."""
    said = f"up to {crowd} trials ran at once on {host}; they shared its cores and storage, so their times " \
           "include that contention."
    if options.get("max_parallel") == 1:
        return said + (" --max-parallel 1 was given, so they came from different arrays (node types) sharing the "
                       "node: give --sbatch-arg=--exclusive for start-up alone.")
    return said + " For start-up alone, give --max-parallel 1 or --sbatch-arg=--exclusive."


def _save_winner(name: str, node_type: str | None, parts: list[NodeTypeSweep], history: Any, yes: bool) -> int:
    if node_type is None and len(parts) > 1:
        say(f"the sweep ran on {len(parts)} node types ({', '.join(p.node_type for p in parts)}): name the one "
            "whose winner to save with --node-type.")
        return 2
    part = next((p for p in parts if node_type in (None, p.node_type)), None)
    if part is None or part.history_id is None:
        say(f"no node type {node_type!r} in this sweep: it ran on {', '.join(p.node_type for p in parts)}.")
        return 2
    store = ProfileStore(profiles_dir())
    try:
        profile = node_type_winner(name, part, history)
        target = store.path(name)
        replaces, code = target.exists(), code_it_runs(profile.config)
        # Asked before anything is written: a profile of that name (maybe accepted, in use) is
        # replaced only after the yes, and then kept as a dated copy.
        agreed = _accepted(name, target, code, replaces, yes) if code or replaces else True
        if replaces and not agreed:
            say(f"profile not saved: the profile {name} ({target}) is kept as it is. Save the winner under another "
                "name, or answer yes (--yes once you have read the above) to replace it.")
            return 1
        path = store.save(profile, overwrite=replaces, trusted=False)
        if agreed:
            store.accept(name, profile.digest)
    except (ProfileError, OSError, ValueError, HistoryError) as exc:
        say(f"profile not saved: {exc}")
        return 1
    kept = f"; the profile it replaced is kept as {store.kept_copy}" if store.kept_copy else ""
    if code and not agreed:
        say(f"saved the winner on {part.label} as profile {name} ({path}), NOT accepted: it runs only after "
            f"`tflaunch profiles trust {shlex.quote(name)}`")
        return 1
    say(f"saved the winner on {part.label} as profile {name} ({path}){kept}")
    return 0


def _accepted(name: str, path: Path, code: list[str], replaces: bool, yes: bool) -> bool:
    """What the profile would run and what it would replace, shown (control characters made
    visible), then asked."""
    print(f"The winner, to be saved as {name} ({path}), comes from the sweep folder's files"
          + (" and would:" if code else "; it runs no code."))
    for line in code:
        print(f"  - {shown(line)}")
    if replaces:
        print(f"It replaces your profile {name} ({path}); that file is kept as a dated copy in "
              f"{path.parent / FOLDER}.")
    if yes:
        return True
    if not sys.stdin.isatty():
        say("nothing accepted; run it in a terminal to be asked, or add --yes once you have read the list above.")
        return False
    question = " and ".join(q for q, on in (("replace your profile", replaces), ("let tflaunch run this", code)) if on)
    return input(f"Accept: {question}? [y/N] ").strip().lower() in ("y", "yes")


def shown(text: str, limit: int = 300) -> str:
    """A value as a terminal must show it before a yes: escapes and controls visible, long cut."""
    visible = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return visible if len(visible) <= limit else f"{visible[:limit]}… ({len(visible)} characters)"
