"""`tflaunch sweep`: try settings automatically from a terminal and crown a winner."""

from __future__ import annotations

import argparse
import json
import sys

from ..paths import profiles_dir
from ..run.formats import ConversionError
from ..run.gpus.nvml import GpuMemorySampler
from ..store.history import HistoryError
from ..store.profiles import ProfileError, ProfileStore
from ..sweep.axes import axes_help
from ..sweep.instances import INSTANCES_HELP, InstanceCountError, instances_table, parse_counts
from ..sweep.plan import (
    OBJECTIVE_FORMS,
    OBJECTIVES,
    PlanError,
    Sweep,
    SweepPlan,
    Trial,
    format_objective,
    is_objective,
    outcome,
)
from ..sweep.report import results_json, results_table
from ..sweep.session import SweepSession, prepare, refusal, run_headless
from ..sweep.stored import winner_profile
from .arguments import SettingsError, add_config_arguments, add_program_argument, config_from_args
from .cluster import add_sweep_options, submit_sweep
from .cluster_options import local_refusal
from .command_tools import open_history, refuse, say
from .echo import Echo, echo_wanted
from .numbers import whole
from .replace_question import add_replace_argument, may_replace, saved_line


def _vary(text: str) -> tuple[str, list[str]]:
    name, sep, values = text.partition("=")
    if not sep or not name or not values:
        raise argparse.ArgumentTypeError(f"expected SETTING=V1,V2 (e.g. intra=1,2), not {text!r}")
    return name, [v.strip() for v in values.split(",") if v.strip()]


def _objective(text: str) -> str:
    if not is_objective(text):
        raise argparse.ArgumentTypeError(f"use one of {', '.join(OBJECTIVES)}, phase:NAME or mark:NAME, not {text!r}")
    return text


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sweep = sub.add_parser("sweep", help="try settings automatically, with statistics, and crown a winner")
    add_config_arguments(sweep, model_required=True)
    add_program_argument(sweep)
    sweep.add_argument("--vary", type=_vary, action="append", default=[], metavar="SETTING=V1,V2",
                       help="a setting and its values (repeatable; needed unless --instances gives several "
                            "counts): " + axes_help().replace("%", "%%"))
    sweep.add_argument("--quiet", action="store_true",
                       help="do not show the programs' own output (shown live on a terminal, each line after │)")
    sweep.add_argument("--repeat", type=whole, default=5, help="measured trials per setting (default 5)")
    sweep.add_argument("--warmup", type=whole, default=1, help="discarded warm-up rounds (default 1)")
    sweep.add_argument("--objective", type=_objective, default="ready",
                       metavar="|".join((*OBJECTIVES, *OBJECTIVE_FORMS)),
                       help="what to minimise: " + ", ".join(f"{k} ({v})" for k, v in OBJECTIVES.items())
                       + ", phase:NAME, the time of any phase the subject reports (phase:first_step), or "
                       "mark:NAME, the time from launch to a point the program marks")
    sweep.add_argument("--no-racing", action="store_true", help="run every trial; do not stop clearly worse settings")
    sweep.add_argument("--instances", type=_counts, default=[1], metavar="N[,N...]",
                       help=f"{INSTANCES_HELP}. One number: every trial starts that many (default 1); several "
                            "(1,2,4): instances varies like a --vary setting, and a table per count says the "
                            "slowest instance's time to ready, GPU memory per process and per GPU, and whether "
                            "all fit")
    sweep.add_argument("--seed", type=whole, default=0, help="seed of the trial order and the bootstrap")
    sweep.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
    sweep.add_argument("--save-winner", metavar="NAME", help="save the winning settings as a launch profile")
    add_replace_argument(sweep, "--save-winner")
    add_sweep_options(sweep)


def run(args: argparse.Namespace) -> int:
    try:
        base = config_from_args(args, model_required=True)
    except SettingsError as exc:
        return refuse(exc.kind, exc.message, args.json)
    axes = dict(args.vary)
    if len(args.instances) > 1:
        if "instances" in axes:
            return refuse("invalid_arguments", "instances is given twice (--instances and --vary instances=...): "
                          "give the counts once, as --instances 1,2,4.", args.json)
        axes["instances"] = [str(n) for n in args.instances]
    if (why := local_refusal(args)) is not None:
        return refuse("invalid_arguments", why, args.json)
    if not axes:
        return refuse("invalid_arguments", "nothing to vary: give --vary SETTING=V1,V2 (such as --vary intra=1,2), "
                      "or several instance counts (--instances 1,2,4).", args.json)
    # Racing needs each result before choosing the next trial; a Slurm array runs them all.
    racing = not args.no_racing and args.on != "slurm"
    plan = SweepPlan(base, axes, args.repeat, args.warmup, args.objective, racing,
                     args.instances[0], args.seed)
    overwrite = False
    if args.save_winner and args.on != "slurm":  # a cluster sweep refuses --save-winner itself
        overwrite, refused = may_replace(args.save_winner, args.replace, args.json)
        if refused is not None:
            return refused
    try:
        candidates = prepare(plan)
    except (PlanError, ConversionError) as exc:  # a script asked for JSON: it gets JSON, failures included
        return refuse("invalid_arguments" if isinstance(exc, PlanError) else "conversion_failed", str(exc), args.json)
    why = refusal(candidates)
    if why:
        return refuse("refused", why, args.json)
    if args.on == "slurm":
        return submit_sweep(args, plan, candidates)
    history, problem = open_history()
    session = SweepSession(plan, candidates, history, problem=problem)
    print(f"tflaunch: sweep of {plan.describe(len(candidates))}", file=sys.stderr)
    gpus = GpuMemorySampler()  # each child's GPU memory, per device (nothing without NVML)
    try:
        status = run_headless(session, _progress, gpus, Echo() if echo_wanted(args.quiet) else None)
    finally:
        gpus.close()
    sweep = session.sweep
    if args.json:
        print(json.dumps(results_json(sweep, session.sweep_id, status), indent=2))
    else:
        print(results_table(sweep))
        if plan.shows_instances:
            print("\n" + instances_table(sweep.instance_rows()))
    if note := session.recorder.note():
        sys.stdout.flush()  # the results first, wherever both streams go
        say(note)
    if status == "cancelled":
        print("tflaunch: sweep cancelled; the finished trials are in the history.", file=sys.stderr)
        return 130
    if sweep.leader() is None:
        print("tflaunch: no setting ran successfully.", file=sys.stderr)
        return 1
    if args.save_winner:
        if sweep.winner() is None:
            print(f"tflaunch: profile {args.save_winner} not saved: "
                  f"{outcome(sweep.results(), sweep.plan.objective)}", file=sys.stderr)
            return 1
        return _save_winner(args.save_winner, session, overwrite)
    return 0


def _counts(text: str) -> list[int]:
    try:
        return parse_counts(text)
    except InstanceCountError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _progress(sweep: Sweep, trial: Trial, value: float | None) -> None:
    leader = sweep.leader()
    lead = f"leader {leader.candidate.key} ({format_objective(sweep.plan.objective, leader.spread.median)})" \
        if leader and leader.spread else ""
    shown = "failed" if value is None else format_objective(sweep.plan.objective, value)
    kind = "warm-up" if trial.warmup else "trial"
    print(f"[{sweep.trials_run}/≤{sweep.planned_without_racing}] {kind} {trial.candidate.key}: {shown}   {lead}",
          file=sys.stderr, flush=True)


def _save_winner(name: str, session: SweepSession, overwrite: bool) -> int:
    if session.history is None or session.sweep_id is None:
        print("tflaunch: the winner cannot be saved without the run history.", file=sys.stderr)
        return 1
    try:
        profile = winner_profile(name, session.sweep, session.history, session.sweep_id)
        store = ProfileStore(profiles_dir())
        path = store.save(profile, overwrite=overwrite)
    except (ProfileError, OSError, ValueError, HistoryError) as exc:
        print(f"tflaunch: profile not saved: {exc}", file=sys.stderr)
        return 1
    say(f"the winner: {saved_line(name, path, store)}")
    return 0
