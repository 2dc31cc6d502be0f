"""`tflaunch check`: a CI gate on start-up. Did this command (a model, or a program after
`--`) get slower than its baseline?

The baseline is another interpreter (--baseline-python), another command
(--baseline-command), the same command in another checkout (--baseline-cwd: a `git worktree`
of the base commit), another model (--baseline-model), or runs stored in this machine's
History (--baseline-runs). Both are measured in fresh processes, interleaved (baseline,
candidate, candidate, baseline, ...) so that a machine that warms up or slows down during
the check weighs on both alike, after warm-up rounds that are not counted. Each figure
(time to ready, each phase) is judged by asv's rule (report/regression.py).

Exit status: 1 a figure got slower, 0 none did, 2 it could not be decided (too few runs,
too noisy, runs that failed, or a check that could not start), always with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from ..phases import AFTER_READY, label, phase_rows
from ..report.check_outputs import CheckResult, check_junit, check_markdown, check_table
from ..report.regression import Rule, Verdict, decide, exit_code
from ..run.driver import run_sessions
from ..run.gpus.nvml import GpuMemorySampler
from ..run.launch_check import launch_check
from ..run.record import RunRecord, RunStatus
from ..run.session import ProbeSession
from ..run.watcher import Watchers
from ..settings.config import LaunchConfig
from ..store.atomic import atomic_write
from ..store.history import HistoryError
from ..store.recorder import RunRecorder
from .arguments import SettingsError, add_config_arguments, add_program_argument, config_from_args, positive_int
from .base_checkout import CheckoutError, base_checkout
from .command_tools import open_history, refuse, say
from .echo import Echo, echo_wanted
from .numbers import decimal, whole
from .progress import Progress

GATE = "time to ready"
BASELINES = ("baseline_python", "baseline_command", "baseline_cwd", "baseline_commit", "baseline_model",
             "baseline_runs")


def _ids(text: str) -> list[int]:
    try:
        ids = [whole(part) for part in text.split(",") if part.strip()]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected run ids like 12,13,14 (`tflaunch history list`), not {text!r}") \
            from None
    if not ids:
        raise argparse.ArgumentTypeError("expected at least one run id")
    return ids


def _fraction(text: str) -> float:
    value = decimal(text)  # ASCII digits, finite (numbers.py)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {text}")
    return value


def _factor(text: str) -> float:
    value = decimal(text)  # ASCII digits, finite (numbers.py)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (1.1: 10 %% slower), not {text}")
    return value


def _seconds(text: str) -> float:
    value = decimal(text)  # ASCII digits, finite (numbers.py)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, not {text}")
    return value


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    check = sub.add_parser("check", help="CI gate: is this start-up slower than a baseline? Exit 1 slower, 0 not, "
                                         "2 undecided (too few runs, too noisy), with the reason")
    add_config_arguments(check, model_required=True)
    add_program_argument(check)
    base = check.add_argument_group("the baseline (exactly one)")
    base.add_argument("--baseline-python", metavar="PATH", help="the same command with another interpreter")
    base.add_argument("--baseline-command", metavar="'COMMAND ARGS'",
                      help="another program command line, quoted as one argument (a program subject only)")
    base.add_argument("--baseline-cwd", metavar="DIR", help="the same program started in another folder: a "
                      "checkout of the base commit (git worktree add DIR main)")
    base.add_argument("--baseline-commit", metavar="REV", help="the same program in a checkout of REV (main, "
                      "HEAD~1, a tag), made with git worktree for the check and removed after it")
    base.add_argument("--baseline-model", metavar="MODEL", help="another model (a model subject only)")
    base.add_argument("--baseline-runs", type=_ids, metavar="ID,ID,...",
                      help="runs stored in this machine's History (not interleaved: said in the summary)")
    check.add_argument("--runs", type=positive_int, default=10, help="counted runs per side (default 10; at least 7 "
                       "for p < 0.002 to be possible)")
    check.add_argument("--warmup", type=whole, default=1, help="uncounted rounds first (default 1): a warm page cache "
                       "is then the files as the previous run left them")
    check.add_argument("--alpha", type=_fraction, default=Rule.alpha,
                       help=f"Mann-Whitney U's p must be below this (default {Rule.alpha:g}, asv's)")
    check.add_argument("--factor", type=_factor, default=Rule.factor,
                       help=f"the medians' ratio must exceed this (default {Rule.factor:g}, asv's)")
    check.add_argument("--min-difference", type=_seconds, default=Rule.min_difference, metavar="SECONDS",
                       help=f"and differ by more than this (default {Rule.min_difference:g} s)")
    check.add_argument("--markdown", metavar="FILE", help="append a Markdown summary (a CI job's summary file: "
                       "--markdown \"$GITHUB_STEP_SUMMARY\")")
    check.add_argument("--junit", metavar="FILE", help="write JUnit XML: a test case per figure")
    check.add_argument("--json", action="store_true", help="print the verdicts as JSON on stdout")
    check.add_argument("--no-history", action="store_true", help="do not store the runs in the run history")
    check.add_argument("--quiet", action="store_true", help="do not show the programs' own output on a terminal")


# -- the baseline --------------------------------------------------------------------------------
def words(config: LaunchConfig) -> str:
    """The command or model as typed, whole (a summary must say exactly what was compared)."""
    return shlex.join(config.program) if config.is_program else config.model


def baseline_config(args: argparse.Namespace, config: LaunchConfig) -> tuple[LaunchConfig | None, str]:
    """The baseline's settings (None for stored runs) and its words; ValueError when the
    options do not name exactly one baseline that fits the subject."""
    given = [name for name in BASELINES if getattr(args, name) is not None]
    if len(given) != 1:
        flags = ", ".join("--" + name.replace("_", "-") for name in BASELINES)
        raise ValueError(f"check needs exactly one baseline ({flags}); {len(given) or 'none'} given")
    which = given[0]
    if which == "baseline_runs":
        return None, f"stored runs {', '.join(map(str, args.baseline_runs))}"
    if which == "baseline_python":
        return config.replace(python=args.baseline_python), f"{words(config)} with {args.baseline_python}"
    if which == "baseline_model":
        if config.is_program:
            raise ValueError("--baseline-model compares models; for a program give --baseline-command")
        return config.replace(model=args.baseline_model), args.baseline_model
    if not config.is_program:
        raise ValueError(f"--{which.replace('_', '-')} needs a program after --; for a model give --baseline-model "
                         "or --baseline-python")
    if which == "baseline_commit":  # its folder exists only while the check runs (base_checkout)
        return config, f"{words(config)} at {args.baseline_commit}"
    if which == "baseline_cwd":
        folder = Path(args.baseline_cwd).expanduser()
        if not folder.is_dir():
            raise ValueError(f"--baseline-cwd {args.baseline_cwd}: no such folder; give the base checkout's folder "
                             "(git worktree add DIR BASE)")
        return config.replace(workdir=str(folder.resolve())), f"{words(config)} in {folder.resolve()}"
    program = tuple(shlex.split(args.baseline_command))
    if not program:
        raise ValueError("--baseline-command is empty; give the baseline's command line, quoted as one argument")
    return config.replace(program=program), shlex.join(program)


def conditions(config: LaunchConfig, warmup: int, stored: bool) -> list[str]:
    """The state every run starts from, fixed by the settings and said."""
    page = {"warm": "warm: the files as the previous run left them (usually in memory)",
            "cold": "cold: the model's files and TensorFlow's installation evicted before every run",
            "preloaded": "preloaded: evicted, then the model's files read back, before every run"}
    cuda = config.cuda_cache or "the driver's own folder, as it is"
    out = [f"Page cache {page.get(config.page_cache, config.page_cache)}.",
           f"CUDA kernel cache: {cuda}; XLA program cache: "
           f"{'kept across runs' if config.xla_cache else 'off'}.",
           "Every run a fresh process, started cold (no warm server).",
           f"{warmup} uncounted warm-up round{'s' if warmup != 1 else ''} first."]
    out.append("Baseline from History: measured earlier, not interleaved; the machine's state then is not checked."
               if stored else "Runs interleaved: baseline, candidate, candidate, baseline, and so on.")
    return out


# -- measuring -----------------------------------------------------------------------------------
def interleaved(rounds: int) -> list[tuple[str, ...]]:
    """The order of each round: ABBA, so neither side always goes first."""
    return [("baseline", "candidate") if i % 2 == 0 else ("candidate", "baseline") for i in range(rounds)]


def figures(baseline: Sequence[RunRecord], candidate: Sequence[RunRecord], rule: Rule) -> list[Verdict]:
    """Time to ready, then each phase of the start both sides reached, judged by `rule`."""
    ok_a = [r for r in baseline if r.status is RunStatus.OK]
    ok_b = [r for r in candidate if r.status is RunStatus.OK]
    verdicts = [decide(GATE, [r.time_to_ready for r in ok_a if r.time_to_ready is not None],
                       [r.time_to_ready for r in ok_b if r.time_to_ready is not None], rule)]
    for name in phase_rows([*ok_a, *ok_b]):
        if name in AFTER_READY:
            continue
        a = [p.duration for p in (r.phase(name) for r in ok_a) if p is not None and p.duration is not None]
        b = [p.duration for p in (r.phase(name) for r in ok_b) if p is not None and p.duration is not None]
        if a and b:
            verdicts.append(decide(label(name), a, b, rule))
    return verdicts


def _failures(side: str, records: Sequence[RunRecord]) -> list[str]:
    failed = [r for r in records if r.status is not RunStatus.OK]
    if not failed:
        return []
    return [f"{len(failed)} of {len(records)} {side} runs failed, not counted: {failed[0].headline}"]


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args, model_required=True)
    except SettingsError as exc:
        return refuse(exc.kind, exc.message, args.json)
    try:
        other, baseline_words = baseline_config(args, config)
    except ValueError as exc:
        return refuse("invalid_arguments", str(exc), args.json)
    if args.warmup < 0:
        return refuse("invalid_arguments", f"--warmup {args.warmup}: give 0 or more rounds", args.json)
    for side, side_config in (("candidate", config), ("baseline", other)):
        problems = launch_check(side_config) if side_config is not None else []
        if problems:
            return refuse(f"invalid_{problems[0].field}", f"the {side}: {problems[0].message}", args.json)
    with ExitStack() as checkout:
        if args.baseline_commit is not None:
            here = Path(config.workdir or os.getcwd()).expanduser()
            try:
                other = config.replace(workdir=str(checkout.enter_context(base_checkout(args.baseline_commit, here))))
            except CheckoutError as exc:
                return refuse("no_checkout", str(exc), args.json)
        return _check(args, config, other, baseline_words)


def _check(args: argparse.Namespace, config: LaunchConfig, other: LaunchConfig | None, baseline_words: str) -> int:
    history, problem = open_history(not args.no_history)
    stored: list[RunRecord] = []
    if other is None:
        if history is None:
            return refuse("no_history", f"--baseline-runs reads History, which cannot be opened ({problem})",
                          args.json)
        try:
            stored = [history.load(run_id) for run_id in args.baseline_runs]
        except KeyError as exc:
            return refuse("no_such_run", f"--baseline-runs: no run {exc} in History; `tflaunch history list` shows "
                                         "the ids", args.json)
        except HistoryError as exc:
            return refuse("history", str(exc), args.json)
    recorder = RunRecorder(history, "cli", problem=problem)
    echo = [Echo()] if echo_wanted(args.quiet) else []
    sides: dict[str, list[RunRecord]] = {"baseline": list(stored), "candidate": []}
    configs = {"baseline": other, "candidate": config}
    rounds = interleaved(args.warmup + args.runs)
    gpus = GpuMemorySampler()
    try:
        for i, order in enumerate(rounds):
            counted = i >= args.warmup
            tag = f"round {i + 1 - args.warmup}/{args.runs}" if counted else f"warm-up {i + 1}/{args.warmup}"
            for side in order:
                side_config = configs[side]
                if side_config is None:
                    continue  # stored
                watchers = Watchers(recorder, *echo, Progress(prefix=f"[{tag} {side}] "))
                record = run_sessions([ProbeSession(side_config)], watchers, gpus)[0]
                if record.status is RunStatus.CANCELLED:
                    return 130
                if counted:
                    sides[side].append(record)
    finally:
        gpus.close()
    rule = Rule(args.alpha, args.factor, args.min_difference)
    verdicts = figures(sides["baseline"], sides["candidate"], rule)
    result = CheckResult(verdicts, exit_code(verdicts, GATE), baseline_words, words(config), rule,
                         conditions(config, args.warmup, other is None),
                         [*_failures("baseline", sides["baseline"]), *_failures("candidate", sides["candidate"])])
    return _report(args, result, recorder)


def _report(args: argparse.Namespace, result: CheckResult, recorder: RunRecorder) -> int:
    if args.json:
        print(json.dumps({"outcome": result.headline, "exit": result.code, "baseline": result.baseline,
                          "candidate": result.candidate, "conditions": list(result.conditions),
                          "failures": list(result.failures),
                          "verdicts": [{"figure": v.figure, "outcome": v.outcome.value, "reason": v.reason,
                                        "ratio": v.ratio, "p": v.p, "baseline_s": list(v.baseline),
                                        "candidate_s": list(v.candidate)} for v in result.verdicts]}, indent=2))
    else:
        print(check_table(result))
    try:
        if args.markdown:
            with open(args.markdown, "a", encoding="utf-8") as summary:  # a CI summary file is appended to
                summary.write(check_markdown(result))
        if args.junit:
            atomic_write(Path(args.junit), check_junit(result).encode("utf-8"))
    except OSError as exc:
        say(f"the summary could not be written ({exc.strerror or exc}: {exc.filename}); choose another file")
        return 2
    if note := recorder.note():
        sys.stdout.flush()
        say(note)
    say(f"check: {result.headline}: {result.sentence()}")
    return result.code
