"""`tflaunch bench`: measure a model's start-up headless, once or repeated."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

from .. import phases
from ..paths import profiles_dir
from ..report.imports import import_table
from ..report.table import repeat_table, run_table
from ..run import events
from ..run.driver import Watchers, run_sessions
from ..run.gpus.nvml import GpuMemorySampler
from ..run.launch_check import launch_check, launch_warnings
from ..run.record import RunRecord, RunStatus
from ..run.session import ProbeSession
from ..settings.config import LaunchConfig
from ..stats import summarize
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
    history, problem = open_history(not args.no_history)
    recorder = RunRecorder(history, "cli", problem=problem)
    records: list[RunRecord] = []
    gpus = GpuMemorySampler()  # per-process GPU memory beside RSS, as the app samples it
    try:
        for i in range(args.repeat):
            prefix = f"[{i + 1}/{args.repeat}] " if args.repeat > 1 else ""
            session = ProbeSession(config, warm=args.warm)
            record = run_sessions([session], Watchers(recorder, Progress(prefix=prefix)), gpus)[0]
            records.append(record)
            if record.status is RunStatus.CANCELLED:
                break
        anatomy = None
        if args.anatomy and not any(r.status is RunStatus.CANCELLED for r in records):
            anatomy = anatomy_run(config, recorder, gpus)
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
        print(run_table(records[0], anatomy.anatomy_dict if anatomy else None))
    else:
        print(repeat_table(records, anatomy.anatomy_dict if anatomy else None))
    if anatomy is not None and anatomy.problem:
        say(anatomy.problem)
    if args.import_xray and not args.json:
        x_rayed = [r for r in records if r.imports]
        print(f"\n{import_table(x_rayed[-1].imports if x_rayed else {}, config.python)}")
        if len(x_rayed) > 1:
            print(f"(the last of {len(records)} runs)")
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

    @property
    def anatomy_dict(self) -> dict[str, Any] | None:
        anatomy = self.record.anatomy
        return {**anatomy, "run_id": self.record.history_id} if anatomy else None

    @property
    def problem(self) -> str | None:
        """Why there are no parts, in words; None when there are."""
        anatomy = self.record.anatomy
        if anatomy and "error" not in anatomy:
            return None
        if anatomy:
            return f"no anatomy: {anatomy['error']}"
        if self.record.status is not RunStatus.OK:
            return f"no anatomy: the profiled run did not succeed ({self.record.headline})"
        return ("no anatomy: the profiled run ended without one (a program that never reached its first step or "
                "first inference)")


def anatomy_run(config: LaunchConfig, recorder: RunRecorder, gpus: GpuMemorySampler) -> AnatomyRun:
    """One extra run, cold, with TensorFlow's profiler on from the end of the import to the
    first step's (or call's) end; stored in the history like every run, its note saying so."""
    session = ProbeSession(config, anatomy=True)
    return AnatomyRun(run_sessions([session], Watchers(recorder, Progress(prefix="[anatomy] ")), gpus)[0])


def json_result(records: list[RunRecord], anatomy: AnatomyRun | None = None) -> dict[str, Any]:
    ok = [r for r in records if r.status is RunStatus.OK]
    by_phase = {}
    for name in phases.phase_rows(ok or records):
        summary = summarize(p.duration for p in (r.phase(name) for r in ok) if p is not None)
        by_phase[name] = summary.to_dict() if summary else None
    ready = summarize(r.time_to_ready for r in ok)
    return {
        "protocol": events.PROTOCOL_VERSION,
        "status": "ok" if len(ok) == len(records) else records[-1].status.value if len(records) == 1 else "failed",
        "runs": [r.to_dict() for r in records],
        "summary": {"ok": len(ok), "runs": len(records), "phases": by_phase,
                    "time_to_ready": ready.to_dict() if ready else None},
        **({"anatomy": anatomy.anatomy_dict, "anatomy_run": anatomy.record.to_dict(),
            "anatomy_problem": anatomy.problem} if anatomy is not None else {}),
    }
