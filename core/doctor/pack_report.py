"""The cache-pack arms in the doctor's words: table rows, sentences and JSON (pack_arm.py
measures them)."""

from __future__ import annotations

import statistics
from typing import Any

from ..units import format_duration
from .pack_arm import PackArmResult, PackDiagnosis
from .verdict import verdict_text


def _median(values: list[float]) -> str:
    return format_duration(statistics.median(values)) if values else ""


def pack_rows(p: PackDiagnosis | None) -> list[list[str]]:
    """Rows in the doctor's table: the baseline's first step, each arm's, and why an arm was not measured."""
    if p is None:
        return []
    if p.note:
        return [["", "pack", "xla_cache=on", "", "0", f"not measured: {p.note}"]]
    rows = [["", "pack", "your settings: first step †", _median(p.baseline_first), str(len(p.baseline_first)), "–"]]
    for arm in p.arms:
        verdict = verdict_text(arm.first_saving, len(arm.first))
        if arm.first_saving is not None:
            verdict = arm.first_saving.describe(of="first step")
        if arm.failure and not arm.first:
            verdict = f"failed: {arm.failure}"
        rows.append(["", "pack", f"{arm.key}: first step †", _median(arm.first), str(len(arm.first)),
                     f"{verdict}; {arm.price()}"])
    rows += [["", "pack", key, "", "0", f"does not apply: {why}"] for key, why in p.skipped.items()]
    return rows


def pack_lines(p: PackDiagnosis | None) -> list[str]:
    """What the pack arms found, in sentences."""
    if p is None:
        return []
    if p.note:
        return [f"Cache pack: {p.note}."]
    lines = ["† the cache pack's arms are judged on the first step (where XLA compiles) and the steady step, "
             "beside your settings in alternated runs with the pack filled first."]
    if fill := p.fill_sentence():
        lines.append(fill)
    for arm in p.arms:
        if arm.recommended and arm.first_saving is not None:
            lines.append(f"Recommended: {arm.key}, which {arm.first_saving.describe(of='first step')[10:]} "
                         f"({arm.price()}); a profile saved with it starts every run with the pack.")
    return lines


def recommended(p: PackDiagnosis | None) -> list[PackArmResult]:
    return [] if p is None else sorted((a for a in p.arms if a.recommended),
                                       key=lambda a: -(a.first_saving.seconds if a.first_saving else 0))


def pack_json(p: PackDiagnosis | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"uses_xla": p.uses_xla, "not_measured": p.note, "baseline_first_step_s": p.baseline_first,
            "baseline_steady_step_s": p.baseline_steady, "fill_first_step_s": p.fill_first,
            "fill_bytes": p.fill_bytes, "fill_entries": p.fill_entries, "does_not_apply": p.skipped,
            "arms": [{"arm": a.key, "first_step_s": a.first, "steady_step_s": a.steady, "failure": a.failure,
                      "first_step": None if a.first_saving is None else a.first_saving.describe(of="first step"),
                      "first_step_saves_s": None if a.first_saving is None else a.first_saving.seconds,
                      "steady_step_saves_s": None if a.steady_saving is None else a.steady_saving.seconds,
                      "price": a.price(), "recommended": a.recommended} for a in p.arms]}
