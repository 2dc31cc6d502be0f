"""`tflaunch sweep`: try settings automatically from a terminal and crown a winner."""

from __future__ import annotations

import argparse
import json
import sys

from .history import HistoryError, default_history
from .model_formats import ConversionError
from .paths import profiles_dir
from .profiles import ProfileError, ProfileStore
from .sweep import OBJECTIVES, PlanError, Sweep, SweepPlan, Trial, format_objective
from .sweep_report import results_json, results_table
from .sweep_runner import prepare, run_sweep, winner_profile


def _vary(text: str) -> tuple[str, list[str]]:
    name, sep, values = text.partition("=")
    if not sep or not name or not values:
        raise argparse.ArgumentTypeError(f"expected SETTING=V1,V2 (e.g. intra=1,2), not {text!r}")
    return name, [v.strip() for v in values.split(",") if v.strip()]


def add_arguments(sub: argparse._SubParsersAction, add_config_arguments) -> None:
    sweep = sub.add_parser("sweep", help="try settings automatically, with statistics, and crown a winner")
    add_config_arguments(sweep, model_required=True)
    sweep.add_argument("--vary", type=_vary, action="append", required=True, metavar="SETTING=V1,V2",
                       help="a setting and its values (repeatable): intra, inter, xla=on,off, "
                            "onednn=default,on,off, memory_growth, gpus=all,0,0+1, batch, format=savedmodel,keras,h5, "
                            "env.NAME=a,b")
    sweep.add_argument("--repeat", type=int, default=5, help="measured trials per setting (default 5)")
    sweep.add_argument("--warmup", type=int, default=1, help="discarded warm-up rounds (default 1)")
    sweep.add_argument("--objective", choices=OBJECTIVES, default="ready", help="what to minimise (default ready)")
    sweep.add_argument("--no-racing", action="store_true", help="run every trial; do not stop clearly worse settings")
    sweep.add_argument("--instances", type=int, default=1, help="probes started together per trial (default 1)")
    sweep.add_argument("--seed", type=int, default=0, help="seed of the trial order and the bootstrap")
    sweep.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
    sweep.add_argument("--save-winner", metavar="NAME", help="save the winning settings as a launch profile")


def run(args: argparse.Namespace, config) -> int:
    plan = SweepPlan(config, dict(args.vary), args.repeat, args.warmup, args.objective, not args.no_racing,
                     args.instances, args.seed)
    try:
        candidates = prepare(plan)
    except (PlanError, ConversionError) as exc:
        print(f"tflaunch: {exc}", file=sys.stderr)
        return 2
    try:
        history = default_history()
    except HistoryError as exc:
        print(f"tflaunch: trials not stored: {exc}", file=sys.stderr)
        history = None
    print(f"tflaunch: sweep of {plan.describe(len(candidates))}", file=sys.stderr)
    sweep, sweep_id, status = run_sweep(plan, history, _progress, candidates)
    print(json.dumps(results_json(sweep, sweep_id, status), indent=2) if args.json else results_table(sweep))
    if status == "cancelled":
        print("tflaunch: sweep cancelled; the finished trials are in the history.", file=sys.stderr)
        return 1
    leader = sweep.leader()
    if leader is None:
        print("tflaunch: no setting ran successfully.", file=sys.stderr)
        return 1
    if args.save_winner:
        return _save_winner(args.save_winner, sweep, history, sweep_id)
    return 0


def _progress(sweep: Sweep, trial: Trial, value: float | None) -> None:
    leader = sweep.leader()
    lead = f"leader {leader.candidate.key} ({format_objective(sweep.plan.objective, leader.spread.median)})" if leader else ""
    shown = "failed" if value is None else format_objective(sweep.plan.objective, value)
    kind = "warm-up" if trial.warmup else "trial"
    print(f"[{sweep.trials_run}/≤{sweep.planned_without_racing}] {kind} {trial.candidate.key}: {shown}   {lead}",
          file=sys.stderr, flush=True)


def _save_winner(name: str, sweep: Sweep, history, sweep_id: int | None) -> int:
    if history is None or sweep_id is None:
        print("tflaunch: the winner cannot be saved without the run history.", file=sys.stderr)
        return 1
    try:
        path = ProfileStore(profiles_dir()).save(winner_profile(name, sweep, history, sweep_id), overwrite=True)
    except ProfileError as exc:
        print(f"tflaunch: profile not saved: {exc}", file=sys.stderr)
        return 1
    print(f"tflaunch: saved the winner as profile {name} ({path})", file=sys.stderr)
    return 0
