"""A sweep's results as rows, text and JSON."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median
from typing import Any

from ..grid import grid
from ..phases import label, merged_order
from ..run.reads import reads_text
from ..units import MIB
from .instances import InstancesRow
from .plan import CandidateResult, Sweep, format_objective, objective_words, outcome, winner_of


def result_rows(results: Sequence[CandidateResult], objective: str) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of a sweep's results, best first: the one table the terminal, the
    app and the review images all show."""
    rows = []
    for rank, result in enumerate(results, start=1):
        s, r = result.spread, result.ratio
        note = result.note
        rows.append([
            str(rank),
            result.candidate.key,
            format_objective(objective, s.median) if s else "–",
            # A range needs two runs and a spread three: fewer show none rather than a 0.
            f"{format_objective(objective, s.low)} – {format_objective(objective, s.high)}" if s and s.n >= 2 else "–",
            format_objective(objective, s.iqr) if s and s.n >= 3 else "–",
            f"{r.estimate:.2f}× ({r.low:.2f}–{r.high:.2f})" if r else "–",
            str(s.n if s else 0),
            note,
        ])
    header = ["#", "Setting", f"Median {objective_words(objective)}", "Min – max", "IQR", "vs baseline (95% CI)",
              "Runs", "Note"]
    return header, rows


def results_table(sweep: Sweep) -> str:
    objective = sweep.plan.objective
    results = sweep.results()
    footer = [f"Trials run: {sweep.trials_run} (all {sweep.planned_without_racing} without racing)",
              outcome(results, objective)]
    footer += [f"{r.candidate.key} failed: {r.failure}" for r in results if r.failure]
    reads = reads_rows(sweep)
    table = ["", "Read from storage per phase (median over measured runs):", grid(*reads)] if reads[1] else []
    return "\n".join([grid(*result_rows(results, objective)), "", *footer, *table])


def reads_rows(sweep: Sweep) -> tuple[list[str], list[list[str]]]:
    """(header, rows): per setting, what each phase read from storage (median bytes, at the
    median phase duration's rate); no rows unless some phase read a MiB or more, which is
    where a cold page cache (page_cache=cold) differs from a warm one."""
    per_setting: dict[str, dict[str, list[tuple[int, float | None]]]] = {}
    for candidate in sweep.candidates:
        phases = per_setting.setdefault(candidate.key, {})
        for trial in sweep.figures.get(candidate.key, []):
            for instance in trial.reads if not trial.warmup else ():
                for name, measured in instance.items():
                    phases.setdefault(name, []).append(measured)
    order = merged_order(list(instance) for trial in sweep.figures.values() for t in trial for instance in t.reads)
    names = [n for n in order if any(max((size for size, _ in per.get(n, [])), default=0) >= MIB
                                      for per in per_setting.values())]
    if not names:
        return [], []
    rows = []
    for key, phases in per_setting.items():
        cells = []
        for name in names:
            reads = phases.get(name, [])
            seconds = [s for _, s in reads if s is not None]
            cells.append(reads_text(median(size for size, _ in reads), median(seconds) if seconds else None)
                         if reads else "–")
        rows.append([key, *cells])
    return ["Setting", *(label(n) for n in names)], rows


def results_json(sweep: Sweep, sweep_id: int | None, status: str) -> dict[str, Any]:
    results = sweep.results()
    winner = winner_of(results)
    return {
        "sweep_id": sweep_id, "status": status, "plan": sweep.plan.to_dict(),
        "trials_run": sweep.trials_run, "trials_without_racing": sweep.planned_without_racing,
        "winner": winner.candidate.key if winner else None,
        "verdict": outcome(results, sweep.plan.objective),
        "results": [{
            "setting": r.candidate.key, "config": r.candidate.config.to_dict(), "values": r.values,
            "median": r.spread.median if r.spread else None, "min": r.spread.low if r.spread else None,
            "max": r.spread.high if r.spread else None, "iqr": r.spread.iqr if r.spread else None,
            "ratio": r.ratio.estimate if r.ratio else None,
            "ratio_ci": [r.ratio.low, r.ratio.high] if r.ratio else None,
            "noisy": r.noisy, "stopped": r.stopped, "failures": r.failures, "first_failure": r.failure,
            "note": r.note,
        } for r in results],
        **({"instances": [instance_dict(row) for row in sweep.instance_rows()]} if sweep.plan.shows_instances else {}),
    }


def instance_dict(row: InstancesRow) -> dict[str, Any]:
    """One setting of an instances sweep for JSON: seconds and bytes as numbers, GPUs by index."""
    return {"setting": row.setting, "instances": row.instances, "trials": row.trials,
            "ready_slowest_median": row.ready,
            "gpu_per_process_bytes": {str(g): v for g, v in sorted(row.gpu_per_process.items())},
            "gpu_total_bytes": {str(g): v for g, v in sorted(row.gpu_total.items())},
            "rss_per_process_bytes": row.rss_per_process, "fit": row.fit, "failure": row.failure,
            "each": [{"ready": ready, "read_bytes_per_s": rate} for ready, rate in row.each]}
