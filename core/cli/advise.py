"""`tflaunch doctor`: which remedies make this model start faster here, measured."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..doctor.experiment import Diagnosis, DoctorError, diagnose
from ..doctor.remedies import REMEDIES
from ..doctor.report import diagnosis_json, doctor_evidence, report_text
from ..doctor.verdict import MIN_RUNS
from ..paths import profiles_dir
from ..run.launch_check import launch_check
from ..store.profiles import Profile, ProfileError, ProfileStore
from ..units import format_duration
from .arguments import (
    SettingsError,
    add_config_arguments,
    add_program_argument,
    config_from_args,
    positive_int,
    print_problems,
)
from .command_tools import open_history, refuse, say
from .replace_question import add_replace_argument, may_replace, saved_line


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    doctor = sub.add_parser("doctor", help="measure which remedies start this model faster here, and combine the "
                                           "ones that do into a verified profile")
    add_config_arguments(doctor, model_required=True)
    add_program_argument(doctor)
    doctor.add_argument("--repeat", type=positive_int, default=5,
                        help=f"measured runs of each arm and of the baseline (at least {MIN_RUNS} for a verdict)")
    doctor.add_argument("--only", metavar="REMEDY,...",
                        help="measure only these remedies: " + ", ".join(f"{k} ({v})" for k, v in REMEDIES.items()))
    doctor.add_argument("--save-profile", metavar="NAME",
                        help="save the combined remedies as a launch profile, if the final A/B verifies them")
    add_replace_argument(doctor, "--save-profile")
    doctor.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
    doctor.add_argument("--no-history", action="store_true", help="do not store the runs in the run history")


def run(args: argparse.Namespace) -> int:
    try:
        base = config_from_args(args, model_required=True)
    except SettingsError as exc:
        return refuse(exc.kind, exc.message, args.json)
    only = None
    if args.only:
        only = {name.strip() for name in args.only.split(",") if name.strip()}
        unknown = sorted(only - set(REMEDIES))
        if unknown:
            return refuse("invalid_arguments", f"--only: no remedy {', '.join(unknown)}; the remedies are "
                                               f"{', '.join(REMEDIES)}.", args.json)
    problems = launch_check(base)
    if problems:
        print_problems(problems)
        return 2
    overwrite = False
    if args.save_profile:
        overwrite, refused = may_replace(args.save_profile, args.replace, args.json)
        if refused is not None:
            return refused
    history, _problem = open_history(not args.no_history)
    trials = [0]

    def on_trial(sweep: Any, trial: Any, value: float | None) -> None:
        trials[0] += 1
        shown = format_duration(value) if value is not None else "failed"
        print(f"tflaunch: [{trials[0]}] {trial.candidate.key}{' (warm-up)' if trial.warmup else ''}: {shown}",
              file=sys.stderr)

    try:
        diagnosis = diagnose(base, repeat=args.repeat, only=only, history=history, say=say, on_trial=on_trial)
    except DoctorError as exc:
        return refuse("cannot_examine", str(exc), args.json)
    except KeyboardInterrupt:
        say("doctor cancelled")
        return 130
    saved = _save(diagnosis, args.save_profile, overwrite) if args.save_profile else None
    if args.json:
        print(json.dumps(diagnosis_json(diagnosis, saved), indent=2))
    else:
        print(report_text(diagnosis))
        if saved:
            print(f"\n{saved}")
    return 0


def _save(diagnosis: Diagnosis, name: str, overwrite: bool) -> str:
    if diagnosis.combined is None or not diagnosis.verified:
        return f"Profile {name} not saved: no combination of remedies was verified faster than the baseline."
    store = ProfileStore(profiles_dir())
    try:
        path = store.save(Profile(name, diagnosis.combined, doctor_evidence(diagnosis)), overwrite=overwrite)
    except (ProfileError, OSError) as exc:
        return f"Profile {name} not saved: {exc}"
    line = saved_line(name, path, store)
    return f"{line[:1].upper()}{line[1:]}: {', '.join(diagnosis.combined_keys)}."
