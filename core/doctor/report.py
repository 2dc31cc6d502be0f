"""The doctor's findings in words and tables: the command line prints them, the Advisor
tab shows the same rows, --json gives the same figures."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from ..grid import grid
from ..report.review import Cell, Review, _date, _stamp, environment_facts, slug
from ..report.table import anatomy_lines
from ..run.anatomy import part_label
from ..units import format_duration
from .experiment import Diagnosis
from .pack_report import pack_json, pack_lines, pack_rows
from .pack_report import recommended as pack_recommended
from .verdict import Saving, interval_text, verdict_text

# "#" numbers the rows whose runs the review's strip plot draws, in the plot's order.
COLUMNS = ("#", "Remedy", "Arm", "Ready", "Runs", "Verdict")


def strips(d: Diagnosis) -> list[tuple[str, list[float], bool]]:
    """The runs a strip plot draws, numbered 1, 2, ... as the table's "#" numbers them: the
    baseline's, then each arm's that has any."""
    return [("baseline", list(d.baseline or d.part_baseline), False),
            *((r.arm.key, list(r.values), False) for r in d.results if r.values)]


def report_rows(d: Diagnosis) -> list[list[str]]:
    """#, remedy, arm, median time to ready, runs, verdict: one row per arm, warm start, and
    each remedy that does not apply (with why)."""
    rows = []
    number = iter(range(1, len(d.results) + 2))
    if d.baseline or not (d.part_baseline or (d.pack is not None and d.pack.baseline_first)):
        # With no arm measured, warm start's cold launches of your command are the baseline.
        against = d.warm if not d.baseline else None
        rows.append([str(next(number)), "baseline", "your settings" + (" (cold start)" if against else ""),
                     format_duration(against.baseline if against else _median(d.baseline)),
                     str(against.runs if against else len(d.baseline)), "–"])
    if d.part_baseline:  # the anatomy arms' baseline: the same settings, their phase measured
        rows.append(["" if d.baseline else str(next(number)), "baseline", "your settings",
                     format_duration(_median(d.part_baseline)) + " *", str(len(d.part_baseline)), "–"])
    for r in d.results:
        median = sorted(r.values)[len(r.values) // 2] if r.values else None
        verdict = verdict_text(r.saving, len(r.values))
        if r.failures and not r.values:
            verdict = f"failed: {r.failure or 'every run failed'}"
        if not r.arm.launchable and r.saving is not None and r.saving.significant:
            verdict += f" ({r.arm.how or 'change your code'}: a launch cannot apply it)"
        if r.arm.part:  # the anatomy chose it: which part it acts on, the saving being the measured one
            phase = r.objective.removeprefix("phase:").replace("_", " ")
            if r.saving is not None:
                verdict = r.saving.describe(of=phase)
            verdict = (f"for {part_label(r.arm.part)} ({format_duration(r.arm.part_seconds)} in the anatomy), "
                       f"measured on the {phase} (baseline {format_duration(_median(d.part_baseline))}): " + verdict)
        rows.append([str(next(number)) if r.values else "", r.arm.remedy, r.arm.key,
                     format_duration(median) + ("" if r.objective == "ready" else " *"),
                     str(len(r.values)), verdict])
    if d.warm is not None or d.warm_note:
        warm_median = format_duration(d.warm.baseline - d.warm.seconds) if d.warm else ""
        cold = f" (cold {format_duration(d.warm.baseline)})" if d.warm else ""
        rows.append(["", "warm", f"warm start{cold}", warm_median, str(d.warm.runs) if d.warm else "0",
                     verdict_text(d.warm, d.warm.runs) if d.warm else str(d.warm_note)])
    rows += pack_rows(d.pack)
    for remedy, why in d.exam.skipped.items():
        rows.append(["", remedy, "", "", "", f"does not apply: {why}"])
    return rows


@dataclass(frozen=True)
class Gain:
    """A remedy that measurably saved time, and what it takes to get it."""

    name: str
    saving: Saving
    how: str
    of: str = "time to ready"  # what the saving is a share of: an anatomy arm's is of its phase


def gains(d: Diagnosis, cli: bool = True) -> list[Gain]:
    """Every remedy with a real, significant saving (the best arm of each, and warm start),
    the largest first, each with what it takes."""
    found = []
    for r in d.recommended:
        assert r.saving is not None
        if not r.arm.launchable:
            how = f"{r.arm.how or 'change your code'} (a launch cannot apply it)"
        elif d.verified and r.arm.key in d.combined_keys:
            how = ("save the verified combination: --save-profile NAME" if cli
                   else "save the verified combination as a profile")
        elif d.verification is not None:
            how = f"set {r.arm.key} (its combination with the others did not verify: measure it again)"
        else:
            how = f"set {r.arm.key}"
        of = "time to ready" if r.objective == "ready" else r.objective.removeprefix("phase:").replace("_", " ")
        found.append(Gain(r.arm.key, r.saving, how, of))
    if d.warm is not None and d.warm.significant:
        how = f"start it with {warm_advice(d)}" if cli else "tick Warm launch in Launch script"
        found.append(Gain("warm start", d.warm, how))
    for arm in pack_recommended(d.pack)[:1]:
        assert arm.first_saving is not None
        how = ("save the verified combination: --save-profile NAME" if d.verified and arm.key in d.combined_keys
               else f"set {arm.key}") + f"; {arm.price()}"
        found.append(Gain(f"cache pack ({arm.key})", arm.first_saving, how, "first step"))
    return sorted(found, key=lambda g: -g.saving.seconds)


def warm_advice(d: Diagnosis) -> str:
    """The command the warm arm measured (the doctor's profile, the interpreter by absolute path)."""
    arm = d.warm_arm
    if arm is None or not arm.command:
        return "tflaunch run --warm --profile NAME -- python your_script.py"
    if d.exam.base.is_program:
        return arm.advice
    return shlex.join([*arm.command[:-2], "your_script.py"])  # a model's: the doctor's script stood for yours


def headline(d: Diagnosis, cli: bool = True) -> str:
    """What the verdicts say, in a sentence: the largest real saving and what it takes, or
    that nothing measurably saved time."""
    found = gains(d, cli)
    if not found:
        return "No setting measurably saved time here: keep your settings."
    best = found[0]
    share = f", {best.saving.seconds / best.saving.baseline:.0%} of its {best.of}" if best.saving.baseline else ""
    more = f" ({len(found) - 1} more below)" if len(found) > 1 else ""
    return (f"Largest measured saving: {best.name}, {format_duration(best.saving.seconds)}{share} "
            f"(95 % CI {interval_text(best.saving.low, best.saving.high)}): {best.how}{more}.")


def report_summary(d: Diagnosis, cli: bool = True) -> list[str]:
    """What to do, in sentences, the headline first: the largest real saving and what it
    takes, then the verified combination (in the command line's words, or the app's)."""
    lines = [headline(d, cli)]
    if d.combined is not None and d.verification is None:
        lines.append("The combination could not be verified (its runs failed).")
    elif d.combined is not None and d.verification is not None:
        state = "verified" if d.verified else "NOT verified"
        lines.append(f"Combined ({', '.join(d.combined_keys)}): {state} in a final A/B against the baseline: "
                     f"{d.verification.describe()}.")
        if d.verified:
            lines.append("Save it with --save-profile NAME, then start your work with "
                         "tflaunch run --profile NAME -- python your_script.py" if cli else
                         "Save it as a profile, then start your work with it (Launch script, or tflaunch run "
                         "--profile NAME).")
    if d.warm is not None and d.warm.significant:
        how = warm_advice(d) if cli else f"tick Warm launch in Launch script with the profile {_warm_profile(d)}"
        what = ("of the program to its ready point" if d.exam.base.is_program
                else "of a script that loads the model and calls it once")
        lines.append(f"Recommended, and verified in its own A/B of {d.warm.runs} cold launches of your command and "
                     f"{d.warm.runs} warm launches of the advised one {what}, each timed from the command to the "
                     f"ready point: warm start, which {d.warm.describe()[len('measured: '):]} ({how}; the profile "
                     f"{_warm_profile(d)} holds the settings measured).")
    lines += pack_lines(d.pack)
    if d.warm_with_pack and d.warm is not None:
        lines.append("Warm start was measured with the cache pack on both sides, so the profile it names starts warm "
                     "and with the pack: the two as one cure.")
    lines += d.kernel_notes
    return lines


def _warm_profile(d: Diagnosis) -> str:
    return (d.warm_arm.profile if d.warm_arm is not None else None) or "NAME"
def anatomy_report(d: Diagnosis) -> list[str]:
    """The anatomy the doctor chose its anatomy arms by, and the parts that chose none."""
    anatomy = d.exam.anatomy
    if anatomy is None:
        return []
    phase = d.exam.record.phase(anatomy.phase or "")
    lines = anatomy_lines(anatomy, phase.duration if phase is not None else None)
    lines += [f"  ({note})" for note in d.exam.anatomy_notes]
    return ["", *lines, "  Each arm's saving below is measured (interleaved runs; * = on the phase itself, not time "
            "to ready), never the part's size."]


def report_text(d: Diagnosis) -> str:
    return "\n".join([f"tflaunch doctor: {d.exam.base.subject}, time to ready (median of each arm)",
                      *anatomy_report(d), "",
                      grid(list(COLUMNS), report_rows(d), text=(1, 2, 5)), "", *report_summary(d)])


def _saving_json(s: Any) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"saves_s": s.seconds, "ci95_s": [s.low, s.high], "baseline_median_s": s.baseline, "runs": s.runs,
            "significant": s.significant, "verdict": s.describe()}


def diagnosis_json(d: Diagnosis, saved: str | None = None) -> dict[str, Any]:
    return {
        "model": d.exam.base.subject,
        "baseline_s": d.baseline,
        "anatomy": d.exam.anatomy.to_dict(run=True) if d.exam.anatomy is not None else None,
        "anatomy_notes": d.exam.anatomy_notes,
        "arms": [{"remedy": r.arm.remedy, "arm": r.arm.key, "part": r.arm.part or None,
                  "part_s": r.arm.part_seconds, "objective": r.objective, "values_s": r.values,
                  "failures": r.failures,
                  "launchable": r.arm.launchable, "saving": _saving_json(r.saving),
                  "verdict": verdict_text(r.saving, len(r.values))} for r in d.results],
        "warm_start": {**(_saving_json(d.warm) or {}), "command": d.warm_arm.command if d.warm_arm else None,
                       "profile": d.warm_arm.profile if d.warm_arm else None,
                       "workdir": d.warm_arm.workdir if d.warm_arm else None}
        if d.warm else {"not_measured": d.warm_note},
        "gpu_kernels": d.kernel_notes,
        "cache_pack": pack_json(d.pack),
        "does_not_apply": d.exam.skipped,
        "combined": d.combined_keys, "verification": _saving_json(d.verification), "verified": d.verified,
        "profile": saved, "sweeps": d.sweep_ids,
    }


def doctor_evidence(d: Diagnosis) -> dict[str, Any]:
    """A profile's evidence from the doctor: which remedies, and the final A/B's figures."""
    v = d.verification
    if v is None:
        raise ValueError("no verification: nothing to save")
    return {"doctor": {"model": d.exam.base.subject, "remedies": d.combined_keys, "baseline_median_s": v.baseline,
                       "saves_s": v.seconds, "ci95_s": [v.low, v.high], "runs": v.runs}}


def doctor_review(d: Diagnosis) -> Review:
    """The doctor's findings as one image for a performance review: each arm's runs as a
    strip beside the baseline's, numbered as the table's "#" column, the verdicts in the
    table, and the headline the verdicts' own (headline())."""
    record = d.exam.record
    summary = report_summary(d, cli=False)
    facts = [("Model", d.exam.base.subject), ("Baseline settings", d.exam.base.summary()),
             *environment_facts([record]),
             ("Method", "each arm and the baseline interleaved in shuffled rounds after a warm-up round; "
                        "saving = difference of medians, 95 % CI by a seeded bootstrap")]
    facts += [("Finding", line) for line in summary[1:]]
    rows = report_rows(d)
    data: list[list[Cell]] = [[int(row[0]) if row[0] else None, row[1], row[2],
                               *([_seconds(row[3])] if row[3] else [None]),
                               int(row[4]) if row[4].isdigit() else None, row[5]] for row in rows]
    return Review("sweep", f"Doctor: {d.exam.base.subject}", f"tflaunch doctor, {_date(record.launched_at)}", facts,
                  table=(list(COLUMNS), rows), headline=summary[0], distributions=strips(d),
                  objective="ready",
                  data=(["#", "Remedy", "Arm", "Ready (s)", "Runs", "Verdict"], data),
                  file_stem=f"tflaunch-doctor-{slug(d.exam.base.subject)}-{_stamp(record.launched_at)}")


def _median(values: list[float]) -> float | None:
    return sorted(values)[len(values) // 2] if values else None


def _seconds(text: str) -> float | None:
    """A median as the table shows it ("2.18 s", "486 ms") back to seconds, for CSV cells."""
    number, _, unit = text.partition(" ")
    try:
        value = float(number)
    except ValueError:
        return None
    return value * {"s": 1.0, "ms": 1e-3, "µs": 1e-6}.get(unit, 1.0)
