"""Review: what a review image says about a run, a comparison or a sweep, without Qt.

The image, the Markdown and the CSV are three renderings of one Review, so the numbers a
reviewer reads in a document and in a spreadsheet are the same ones the picture shows.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..phases import LABELS, OTHER, OTHER_LABEL, PHASES
from ..run.record import RunRecord
from ..settings.config import LaunchConfig
from ..store.profiles import describe_evidence
from ..sweep.plan import Sweep, outcome
from ..sweep.report import result_rows
from ..units import format_bytes, format_duration
from .compare import ROW_LABELS, bar_values, deltas, differing_settings, rows_for


@dataclass
class Series:
    """One run as the charts draw it."""

    label: str
    spans: dict[str, tuple[float, float]]  # phase: (start s, duration s)
    samples: list[tuple[float, int]]  # (s since launch, bytes)
    peak: int | None
    bars: dict[str, float | None] = field(default_factory=dict)  # comparison chart: row -> seconds
    gaps: list[tuple[float, float]] = field(default_factory=list)  # (start s, duration s) between phases


@dataclass
class Review:
    kind: str  # run, comparison, sweep, profile
    title: str
    subtitle: str
    facts: list[tuple[str, str]]  # (label, value with unit)
    series: list[Series] = field(default_factory=list)
    table: tuple[list[str], list[list[str]]] | None = None
    headline: str = ""
    # A sweep's trials per setting (setting, values, stopped early) and what they measure.
    distributions: list[tuple[str, list[float], bool]] = field(default_factory=list)
    objective: str = "ready"

    def markdown(self) -> str:
        lines = [f"# {self.title}", "", self.subtitle, ""]
        if self.headline:
            lines += [f"**{self.headline}**", ""]
        lines += [f"- **{label}:** {value}" for label, value in self.facts] + [""]
        if self.table:
            header, rows = self.table
            lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        return "\n".join(lines).rstrip() + "\n"

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        if self.table:
            header, rows = self.table
            writer.writerow(header)
            writer.writerows(rows)
        else:
            writer.writerow(["item", "value"])
            writer.writerows(self.facts)
        return out.getvalue()


def _date(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def series(record: RunRecord, label: str) -> Series:
    return Series(label, record.offsets(), list(record.samples), record.peak_rss, bar_values(record), record.gaps())


def run_review(record: RunRecord, profile: str | None = None) -> Review:
    ident = f"run #{record.history_id}" if record.history_id is not None else "run"
    title = f"{record.subject}: {record.status_line}"
    facts = [("Settings", record.config.summary()), ("Environment", record.environment_line)]
    if record.model.get("params") is not None:
        size = f", {format_bytes(record.model['bytes_on_disk'])} on disk" if record.model.get("bytes_on_disk") else ""
        facts.insert(0, ("Model", f"{record.model.get('format', '')} with {record.model['params']:,} parameters{size}"))
    if profile:
        facts.insert(0, ("Profile", profile))
    if not record.is_script:
        facts.append(("Time to ready", format_duration(record.time_to_ready)))
    facts.append(("Peak memory (process tree)", format_bytes(record.peak_rss)))
    if record.failure is not None:
        facts.append(("Failure", record.failure.message))
    if record.steady_line:
        facts.append(("Steady latency", record.steady_line))
    if record.inputs_line:
        facts.append(("Inputs", record.inputs_line + (f" via signature {record.model['signature']}"
                                                      if record.model.get("signature") else "")))
    facts += [("Warning", warning) for warning in record.warnings]
    rows = [[LABELS[name], format_duration(record.phases[name].duration), format_bytes(record.phases[name].rss),
             format_bytes(record.phases[name].peak_rss)] for name in PHASES]
    if record.latency.get("n"):  # per call, as everywhere: a total depends on how many calls
        rows[-1][1] = f"{format_duration(record.latency['median'])}/call"
    if record.other_time is not None:
        rows.insert(len(PHASES) - 1, [OTHER_LABEL, format_duration(record.other_time), "–", "–"])
    return Review("run", title, f"{ident}, {_date(record.launched_at)}", facts, [series(record, ident)],
                  (["Phase", "Duration", "RSS at end", "Peak RSS"], rows))


def comparison_review(records: Sequence[RunRecord], baseline: int = 0) -> Review:
    labels = [f"#{r.history_id}" if r.history_id is not None else f"run {i + 1}" for i, r in enumerate(records)]
    base = records[baseline]
    table_deltas = deltas(list(records), baseline)
    header = ["Phase", *[f"{label} {r.config.summary()}" + (" (baseline)" if i == baseline else "")
                         for i, (label, r) in enumerate(zip(labels, records, strict=True))]]
    rows = []
    for row in rows_for(records):
        cells = [ROW_LABELS[row]]
        for i, d in enumerate(table_deltas):
            cells.append(format_duration(d[row].value) if i == baseline else d[row].describe())
        rows.append(cells)
    rows.append(["Peak memory", *[format_bytes(r.peak_rss) for r in records]])
    best = min(range(len(records)), key=lambda i: records[i].time_to_ready or float("inf"))
    ratio = table_deltas[best]["ready"].ratio
    headline = (f"Fastest to ready: {labels[best]} {records[best].config.summary()}, "
                f"{format_duration(records[best].time_to_ready)}"
                + (f", {ratio:.2f}× the baseline" if ratio and best != baseline else " (the baseline)"))
    differing = differing_settings([r.config for r in records])
    facts = [("Model", base.subject), ("Environment", base.environment_line), ("Runs compared", str(len(records))),
             ("Settings that differ", "; ".join(
                 f"{name}: " + " / ".join(str(getattr(r.config, name)) for r in records) for name in differing)
              or "none (the same settings, run again)")]
    first, last = _date(min(r.launched_at for r in records)), _date(max(r.launched_at for r in records))
    return Review("comparison", f"{base.subject}: {len(records)} runs compared",
                  first if first == last else f"{first} to {last}", facts,
                  [series(r, f"{label}: {r.config.summary()}") for r, label in zip(records, labels, strict=True)],
                  (header, rows), headline)


def sweep_review(sweep: Sweep, example: RunRecord | None, sweep_id: int | None = None) -> Review:
    objective = sweep.plan.objective
    results = sweep.results()
    facts = [("Model", sweep.plan.base.model), ("Plan", sweep.plan.describe(len(sweep.candidates))),
             ("Trials run", f"{sweep.trials_run} (all {sweep.planned_without_racing} without racing)")]
    if example is not None:
        facts.append(("Environment", example.environment_line))
    ident = f"sweep #{sweep_id}" if sweep_id is not None else "sweep"
    if example is not None:
        ident += f", {_date(example.launched_at)}"
    return Review("sweep", f"{sweep.plan.base.model}: which settings start it fastest", ident, facts,
                  [], result_rows(results, objective),
                  outcome(results, objective),
                  [(r.candidate.key, list(r.values), r.stopped is not None) for r in results], objective)


def profile_review(name: str, evidence: dict[str, Any], config: LaunchConfig) -> Review:
    phases = evidence.get("phases") or {}
    start, spans = 0.0, {}
    for phase in PHASES:
        if phase in phases:
            spans[phase] = (start, phases[phase]["median"])
            start += phases[phase]["median"] if phase != "steady" else 0.0
    facts = [("Settings", config.summary())] + [("Evidence", line) for line in describe_evidence(evidence)]
    labels = {**LABELS, OTHER: OTHER_LABEL}
    rows = [[labels[p], format_duration(v.get("median")), format_duration(v.get("min")), format_duration(v.get("max"))]
            for p, v in phases.items() if p in labels]
    return Review("profile", f"Launch profile {name}",
                  f"{evidence.get('model', config.model)}, {evidence.get('date', '')}", facts,
                  [Series("median of the evidence runs", spans, [], evidence.get("peak_rss_bytes_median"))],
                  (["Phase", "Median", "Min", "Max"], rows))
