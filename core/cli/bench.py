"""`tflaunch bench`: measure a model's start-up headless, once or repeated."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import phases
from ..paths import profiles_dir
from ..report import exports
from ..report.imports import import_table
from ..report.table import repeat_table, run_table
from ..report.tensorboard_logdir import KeepError, keep_profile
from ..report.trace_export import trace_json
from ..run.driver import run_sessions
from ..run.gpus.nvml import GpuMemorySampler
from ..run.launch_check import launch_check, launch_warnings
from ..run.protocol import PROTOCOL_VERSION
from ..run.record import RunRecord, RunStatus
from ..run.session import ProbeSession
from ..run.watcher import Watcher, Watchers
from ..settings.config import LaunchConfig
from ..stats import summarize
from ..store.atomic import atomic_write
from ..store.profiles import Profile, ProfileError, ProfileStore, evidence_from_runs
from ..store.recorder import RunRecorder
from ..sweep.plan import Candidate, SweepPlan
from .arguments import (
    SettingsError,
    add_config_arguments,
    add_program_argument,
    config_from_args,
    failure_json,
    positive_int,
    print_problems,
)
from .cluster import add_sweep_options, submit_sweep
from .cluster_options import local_refusal
from .command_tools import open_history, refuse, say
from .echo import Echo, echo_wanted
from .progress import Progress
from .replace_question import add_replace_argument, may_replace, saved_line


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    bench = sub.add_parser("bench", help="run the probe headless and print a phase table")
    add_config_arguments(bench, model_required=True)
    add_program_argument(bench)
    bench.add_argument("--repeat", type=positive_int, default=1, help="fresh processes to run (median, min–max)")
    bench.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
    bench.add_argument("--save-profile", metavar="NAME", help="save these settings and results as a launch profile")
    add_replace_argument(bench, "--save-profile")
    bench.add_argument("--no-history", action="store_true", help="do not store the runs in the run history")
    bench.add_argument("--warm", action="store_true", help="a program only: start it warm, forked from a server of "
                       "its interpreter that has imported TensorFlow already (cold, saying why, when it cannot be)")
    # Not --import (which names code to import): dest keeps the two apart.
    bench.add_argument("--imports", action="store_true", dest="import_xray",
                       help="print the import X-ray after the phase table: the modules import spent most on")
    bench.add_argument("--anatomy", action="store_true",
                       help="after the measured runs, one extra run with TensorFlow's profiler on: its first step "
                            "(a program) or first call (a model) in parts: tracing, instantiation and graph "
                            "optimisation, XLA, variables, data, execution, the GPU's one-time work")
    bench.add_argument("--tensorboard", metavar="LOGDIR",
                       help="with --anatomy: keep its run's TensorFlow profile where TensorBoard's Profile tab finds "
                            "it (LOGDIR/plugins/profile/TIME_tflaunch_run_ID/HOST.xplane.pb): tensorboard --logdir "
                            "LOGDIR")
    bench.add_argument("--quiet", action="store_true",
                       help="do not show the program's own output (shown live on a terminal, each line after │)")
    bench.add_argument("--trace", metavar="FILE",
                       help="also write the runs as a Chrome trace (one process track each, the anatomy run's too) "
                            "that ui.perfetto.dev and chrome://tracing open; gzipped when FILE ends in .gz")
    add_sweep_options(bench)  # --on slurm: the --repeat runs as a job array per node type




def run(args: argparse.Namespace) -> int:
    if (why := local_refusal(args)) is not None:
        return refuse("invalid_arguments", why, args.json)
    try:
        config = config_from_args(args, model_required=True)
    except SettingsError as exc:
        return refuse(exc.kind, exc.message, args.json)
    problems = launch_check(config)
    for warning in [] if problems else launch_warnings(config):
        say(f"warning: {warning}")
    if problems:
        if args.json:
            first = problems[0]
            print(json.dumps(failure_json(f"invalid_{first.field}", first.message, first.field), indent=2))
        print_problems(problems)
        return 2
    if args.on == "slurm" and (args.trace or args.tensorboard):
        return refuse("invalid_arguments", "--trace and --tensorboard write what runs here; with --on slurm, merge the "
                      "sweep, then `tflaunch history export ID... -o runs.trace.json`.", args.json)
    if args.on == "slurm":  # the same settings on each node type: a sweep with nothing varied
        plan = SweepPlan(config, {}, args.repeat, 0, "ready", False)
        return submit_sweep(args, plan, [Candidate("baseline", config, baseline=True)])
    if args.warm and not config.is_program:
        return refuse("invalid_arguments", "--warm starts a program warm: give your command after -- (the probe "
                                           "of a model always starts cold, since what it measures starts with the "
                                           "import).", args.json)
    overwrite = False
    if args.save_profile:
        overwrite, refused = may_replace(args.save_profile, args.replace, args.json)
        if refused is not None:
            return refused
    if args.tensorboard and not args.anatomy:
        return refuse("invalid_arguments", "--tensorboard keeps the anatomy run's profile: add --anatomy.", args.json)
    if args.trace and not os.access(Path(args.trace).resolve().parent, os.W_OK):
        return refuse("cannot_write", f"--trace {args.trace}: its folder does not exist or takes no files; choose "
                                      "another file.", args.json)
    history, problem = open_history(not args.no_history)
    recorder = RunRecorder(history, "cli", problem=problem)
    records: list[RunRecord] = []
    echo = [Echo()] if echo_wanted(args.quiet) else []
    gpus = GpuMemorySampler()  # per-process GPU memory beside RSS, as the app samples it
    try:
        for i in range(args.repeat):
            prefix = f"[{i + 1}/{args.repeat}] " if args.repeat > 1 else ""
            session = ProbeSession(config, warm=args.warm)
            record = run_sessions([session], Watchers(recorder, *echo, Progress(prefix=prefix)), gpus)[0]
            records.append(record)
            if record.status is RunStatus.CANCELLED:
                break
        anatomy = None
        if args.anatomy and not any(r.status is RunStatus.CANCELLED for r in records):
            anatomy = anatomy_run(config, recorder, gpus, *echo, keep=args.tensorboard)
    finally:
        gpus.close()
    failed = [r for r in records if r.status is not RunStatus.OK]
    if args.save_profile and not failed:
        try:
            store = ProfileStore(profiles_dir())
            path = store.save(Profile(args.save_profile, config, evidence_from_runs(records)), overwrite=overwrite)
            say(saved_line(args.save_profile, path, store))
        except (ProfileError, OSError) as exc:
            print(f"tflaunch: profile not saved: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(json_result(records, anatomy), indent=2))
    elif len(records) == 1:
        print(run_table(records[0], anatomy.record.run_anatomy if anatomy is not None else None))
    else:
        print(repeat_table(records, anatomy.record.run_anatomy if anatomy is not None else None))
    if anatomy is not None and anatomy.problem:
        say(anatomy.problem)
    if anatomy is not None and anatomy.kept is not None:
        say(f"the anatomy run's profile is kept at {anatomy.kept}: tensorboard --logdir {args.tensorboard}, then "
            "its Profile tab")
    elif anatomy is not None and anatomy.keep_problem:
        say(anatomy.keep_problem)
    if args.import_xray and not args.json:
        x_rayed = [r for r in records if r.imports]
        print(f"\n{import_table(x_rayed[-1].imports if x_rayed else None, config.python)}")
        if len(x_rayed) > 1:
            print(f"(the last of {len(records)} runs)")
    if args.trace and records:
        traced = [*records, *([anatomy.record] if anatomy is not None else [])]
        if (unwritten := write_trace(args.trace, traced)) is not None:
            say(unwritten)
            return 1
    if note := recorder.note():  # after the results, which a history problem must never cost
        sys.stdout.flush()  # the results first, wherever both streams go
        say(note)
    for record in failed:
        excerpt = record.failure.detail if record.failure else ""
        for line in excerpt.splitlines()[-8:]:
            print(f"  | {line}", file=sys.stderr)
        print(f"tflaunch: {record.headline}", file=sys.stderr)
    if args.save_profile and failed:
        print(f"tflaunch: profile {args.save_profile} not saved: not every run succeeded.", file=sys.stderr)
    if any(r.status is RunStatus.CANCELLED for r in records):
        return 130
    return 1 if failed else 0


@dataclass
class AnatomyRun:
    """The extra, profiled run of --anatomy, and its anatomy with the run it came from."""

    record: RunRecord
    kept: Path | None = None  # the profile kept for TensorBoard (--tensorboard)
    keep_problem: str | None = None  # why it was not

    @property
    def problem(self) -> str | None:
        """Why there are no parts, in words; None when there are."""
        anatomy = self.record.anatomy
        if anatomy is not None:
            return f"no anatomy: {anatomy.error}" if anatomy.error is not None else None
        if self.record.status is not RunStatus.OK:
            return f"no anatomy: the profiled run did not succeed ({self.record.headline})"
        return ("no anatomy: the profiled run ended without one (a program that never reached its first step or "
                "first inference)")

    def to_dict(self) -> dict[str, Any]:
        """Its keys in bench's JSON: the anatomy with its run's id, that run, and why there are no parts."""
        anatomy = self.record.run_anatomy
        return {"anatomy": anatomy.to_dict(run=True) if anatomy is not None else None,
                "anatomy_run": self.record.to_dict(), "anatomy_problem": self.problem}


def anatomy_run(config: LaunchConfig, recorder: RunRecorder, gpus: GpuMemorySampler, *more: Watcher,
                keep: str | None = None) -> AnatomyRun:
    """One extra run, cold, with TensorFlow's profiler on from the end of the import to the
    first step's (or call's) end; stored in the history like every run, its note saying so.
    `keep`: a TensorBoard log folder that keeps the profile (tensorboard_logdir.py)."""
    written = Path(tempfile.mkdtemp(prefix="tflaunch-anatomy-")) if keep else None
    try:
        session = ProbeSession(config, anatomy=True, keep_trace=str(written) if written else None)
        watchers = Watchers(recorder, *more, Progress(prefix="[anatomy] "))
        run = AnatomyRun(run_sessions([session], watchers, gpus)[0])
        if keep and written is not None and run.record.anatomy is not None and run.record.anatomy.error is None:
            try:
                run.kept = keep_profile(written, Path(keep).expanduser(), run.record.history_id,
                                        run.record.launched_at)
            except KeepError as exc:
                run.keep_problem = f"profile not kept: {exc}"
        elif keep:
            run.keep_problem = f"nothing kept in {keep}: the anatomy run gave no profile (said above)"
        return run
    finally:
        if written is not None:
            shutil.rmtree(written, ignore_errors=True)


def write_trace(path: str, records: list[RunRecord]) -> str | None:
    """The runs as a Chrome trace at `path`; what went wrong, in words, or None."""
    try:
        atomic_write(Path(path), exports.encoded(trace_json([(r.history_id, r) for r in records]), path))
    except OSError as exc:
        return f"trace not written to {path} ({exc.strerror or exc}); choose another file with --trace."
    say(f"trace of {len(records)} run{'s' if len(records) != 1 else ''} written to {path}: open it in "
        "ui.perfetto.dev or chrome://tracing")
    return None


def json_result(records: list[RunRecord], anatomy: AnatomyRun | None = None) -> dict[str, Any]:
    ok = [r for r in records if r.status is RunStatus.OK]
    by_phase = {}
    for name in phases.phase_rows(ok or records):
        summary = summarize(p.duration for p in (r.phase(name) for r in ok) if p is not None)
        by_phase[name] = summary.to_dict() if summary else None
    ready = summarize(r.time_to_ready for r in ok)
    return {
        "protocol": PROTOCOL_VERSION,
        "status": "ok" if len(ok) == len(records) else records[-1].status.value if len(records) == 1 else "failed",
        "runs": [r.to_dict() for r in records],
        "summary": {"ok": len(ok), "runs": len(records), "phases": by_phase,
                    "time_to_ready": ready.to_dict() if ready else None},
        **(anatomy.to_dict() if anatomy is not None else {}),
    }
