"""`tflaunch doctor`: which remedies make this model start faster here, measured."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..doctor.experiment import Diagnosis, DoctorError, diagnose
from ..doctor.remedies import REMEDIES
from ..doctor.verdict import MIN_RUNS, verdict_text
from ..grid import grid
from ..paths import profiles_dir
from ..run.launch_check import launch_check
from ..store.profiles import Profile, ProfileError, ProfileStore
from ..units import format_duration
from .arguments import SettingsError, add_config_arguments, config_from_args, positive_int, print_problems
from .bench import open_history, refuse, say


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    doctor = sub.add_parser("doctor", help="measure which remedies start this model faster here, and combine the "
                                           "ones that do into a verified profile")
    add_config_arguments(doctor, model_required=True)
    doctor.add_argument("--repeat", type=positive_int, default=5,
                        help=f"measured runs of each arm and of the baseline (at least {MIN_RUNS} for a verdict)")
    doctor.add_argument("--only", metavar="REMEDY,...",
                        help="measure only these remedies: " + ", ".join(f"{k} ({v})" for k, v in REMEDIES.items()))
    doctor.add_argument("--save-profile", metavar="NAME",
                        help="save the combined remedies as a launch profile, if the final A/B verifies them")
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
    if args.save_profile:
        try:
            ProfileStore(profiles_dir()).check_writable(args.save_profile)
        except ProfileError as exc:
            return refuse("invalid_profile_name", str(exc), args.json)
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
    saved = _save(diagnosis, args.save_profile) if args.save_profile else None
    if args.json:
        print(json.dumps(diagnosis_json(diagnosis, saved), indent=2))
    else:
        print(report_text(diagnosis))
        if saved:
            print(f"\n{saved}")
    return 0


def _save(diagnosis: Diagnosis, name: str) -> str:
    if diagnosis.combined is None or not diagnosis.verified:
        return f"Profile {name} not saved: no combination of remedies was verified faster than the baseline."
    verification = diagnosis.verification
    assert verification is not None
    evidence = {"doctor": {"remedies": diagnosis.combined_keys, "baseline_median_s": verification.baseline,
                           "saves_s": verification.seconds, "ci95_s": [verification.low, verification.high],
                           "runs": verification.runs}}
    path = ProfileStore(profiles_dir()).save(Profile(name, diagnosis.combined, evidence), overwrite=True)
    return f"Saved profile {name} ({path}): {', '.join(diagnosis.combined_keys)}."


def report_text(d: Diagnosis) -> str:
    rows = []
    base_median = sorted(d.baseline)[len(d.baseline) // 2] if d.baseline else None
    rows.append(["baseline", "your settings", format_duration(base_median), str(len(d.baseline)), "–"])
    for r in d.results:
        median = sorted(r.values)[len(r.values) // 2] if r.values else None
        verdict = verdict_text(r.saving, len(r.values))
        if r.failures and not r.values:
            verdict = f"failed: {r.failure or 'every run failed'}"
        if not r.arm.launchable and r.saving is not None and r.saving.significant:
            verdict += " (change your code: a launch cannot apply it)"
        rows.append([r.arm.remedy, r.arm.key, format_duration(median), str(len(r.values)), verdict])
    if d.warm is not None or d.warm_note:
        warm_median = format_duration(d.warm.baseline - d.warm.seconds) if d.warm else ""
        rows.append(["warm", "tflaunch run --warm", warm_median, str(d.warm.runs) if d.warm else "0",
                     verdict_text(d.warm, d.warm.runs) if d.warm else str(d.warm_note)])
    for remedy, why in d.exam.skipped.items():
        rows.append([remedy, "", "", "", f"does not apply: {why}"])
    lines = [f"tflaunch doctor: {d.exam.base.model}, time to ready (median of each arm)", "",
             grid(["Remedy", "Arm", "Ready", "Runs", "Verdict"], rows, text=(1, 4)), ""]
    if d.combined is None:
        lines.append("No setting measurably saved time on this model here: keep your settings.")
    elif d.verification is None:
        lines.append("The combination could not be verified (its runs failed).")
    else:
        state = "verified" if d.verified else "NOT verified"
        lines.append(f"Combined ({', '.join(d.combined_keys)}): {state} in a final A/B against the baseline: "
                     f"{d.verification.describe()}.")
        if d.verified:
            lines.append("Save it with --save-profile NAME, then start your work with "
                         "tflaunch run --profile NAME -- python your_script.py")
    if d.warm is not None and d.warm.significant:
        lines.append("Warm start saves time for every launch of a script: tflaunch run --warm --profile NAME -- "
                     "python your_script.py")
    return "\n".join(lines)


def _saving_json(s: Any) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"saves_s": s.seconds, "ci95_s": [s.low, s.high], "baseline_median_s": s.baseline, "runs": s.runs,
            "significant": s.significant, "verdict": s.describe()}


def diagnosis_json(d: Diagnosis, saved: str | None = None) -> dict[str, Any]:
    return {
        "model": d.exam.base.model,
        "baseline_s": d.baseline,
        "arms": [{"remedy": r.arm.remedy, "arm": r.arm.key, "values_s": r.values, "failures": r.failures,
                  "launchable": r.arm.launchable, "saving": _saving_json(r.saving),
                  "verdict": verdict_text(r.saving, len(r.values))} for r in d.results],
        "warm_start": _saving_json(d.warm) if d.warm else {"not_measured": d.warm_note},
        "does_not_apply": d.exam.skipped,
        "combined": d.combined_keys, "verification": _saving_json(d.verification), "verified": d.verified,
        "profile": saved, "sweeps": d.sweep_ids,
    }
