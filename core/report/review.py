"""Review: what a review image says about a run, a comparison or a sweep, without Qt.

The image, the Markdown and the CSV are three renderings of one Review, so the numbers a
reviewer reads in a document and in a spreadsheet are the same ones the picture shows:
as text with units in the picture and the Markdown, as plain numbers (the unit in the
column's header) in the CSV. Every fact comes from the review's own runs.
"""

from __future__ import annotations

import csv
import io
import re
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from ..phases import AFTER_READY, NAME, OTHER, OTHER_LABEL, STEADY, label, step_unit, timeline_rows
from ..run.anatomy import anatomy_rows, source_line
from ..run.reads import reads_line
from ..run.record import PhaseState, RunRecord
from ..run.words import gpu_memory_line
from ..settings.config import LaunchConfig
from ..settings.display import setting_text
from ..stats import summarize
from ..store.profiles import describe_evidence
from ..subject import Subject
from ..sweep.instances import instances_rows
from ..sweep.plan import CandidateResult, Sweep, objective_words, outcome
from ..sweep.report import result_rows
from ..units import format_bytes, format_duration
from .compare import (
    bar_values,
    memory_rows,
    row_label,
    row_value,
    rows_for,
    run_ident,
    short_values,
    time_rows,
)
from .imports import import_flags, import_line
from .sides import Side, differences, headline, measured, side_labels, sides_of, spread_text, too_few_note
from .subjects import own_settings_differ, subject_words, subjects_title

Cell = float | int | bool | str | None  # a spreadsheet's cell: a number, a yes/no, a word, or nothing


@dataclass
class Series:
    """One run as the charts draw it."""

    label: str
    spans: dict[str, tuple[float, float]]  # phase: (start s, duration s)
    samples: list[tuple[float, int]]  # (s since launch, bytes)
    peak: int | None
    bars: dict[str, float | None] = field(default_factory=dict)  # comparison chart: row -> seconds
    gaps: list[tuple[float, float]] = field(default_factory=list)  # (start s, duration s) between phases
    gpu_samples: list[tuple[float, dict[int, int]]] = field(default_factory=list)  # (s, {gpu index: bytes})
    allocator: dict[int, int] = field(default_factory=dict)  # TensorFlow's allocator peak per GPU, bytes
    # A side of several runs: each bar's range (min, max) in seconds, and how many runs it is.
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    runs: int = 1


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
    # The table for a spreadsheet: plain numbers, each column's unit in its header.
    data: tuple[list[str], list[list[Cell]]] | None = None
    # What to call its file: tflaunch-run-sample-mlp-2026-11-23-1412, without the extension.
    file_stem: str = "tflaunch-review"
    # An instances sweep's figures per count (sweep.instances.instances_rows), under its results.
    instances: tuple[list[str], list[list[str]]] | None = None
    # A comparison's phases, each side's median (range, n): the Markdown's; the picture has bars.
    phases: tuple[list[str], list[list[str]]] | None = None

    def markdown(self) -> str:
        lines = [f"# {self.title}", "", self.subtitle, ""]
        if self.headline:
            lines += [f"**{self.headline}**", ""]
        lines += [f"- **{label}:** {value}" for label, value in self.facts] + [""]
        if self.table:
            header, rows = self.table
            lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        for extra in (self.instances, self.phases):
            if extra:
                header, rows = extra
                lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        return "\n".join(lines).rstrip() + "\n"

    def csv(self) -> str:
        """Numbers a spreadsheet can sum: seconds and bytes as plain numbers (the unit in
        the header), yes/no as true/false, nothing measured as an empty cell."""
        out = io.StringIO()
        writer = csv.writer(out)
        if self.data:
            header, rows = self.data
            writer.writerow(header)
            writer.writerows([csv_cell(cell) for cell in row] for row in rows)
        else:
            writer.writerow(["item", "value"])
            writer.writerows(self.facts)
        return out.getvalue()


def csv_cell(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.10g}"  # a microsecond in up to 2.7 hours, without the float noise of a sum
    return str(value)


def _date(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def _stamp(ts: float) -> str:
    return time.strftime("%Y-%m-%d-%H%M", time.localtime(ts))


def slug(subject: str) -> str:
    """A model or script as part of a file name: sample:mlp -> sample-mlp,
    /models/resnet.keras -> resnet, script: /work/train.py -> script-train."""
    prefix, text = ("script-", subject[len("script: "):]) if subject.startswith("script: ") else ("", subject)
    name = PurePath(text.rstrip("/\\")).name or text
    name = re.sub(r"\.(keras|h5|hdf5|py)$", "", name.replace(".py:", "-"))
    return (prefix + re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-."))[:60].strip("-.") or "model"


def _dates(records: Sequence[RunRecord]) -> str:
    """When these runs ran: one date, or the first to the last."""
    first, last = _date(min(r.launched_at for r in records)), _date(max(r.launched_at for r in records))
    return first if first == last else f"{first} to {last}"


def _each(records: Sequence[RunRecord], value: Callable[[RunRecord], str | None],
          labels: Sequence[str] | None = None) -> str | None:
    """One value when the runs agree; otherwise each value with the runs it belongs to
    (by label, or counted). None when no run has one."""
    groups: dict[str, list[str]] = {}
    for i, record in enumerate(records):
        text = value(record)
        if text is not None:
            group = groups.setdefault(text, [])
            label = labels[i] if labels else str(i)
            if not labels or label not in group:  # a side's runs: its letter once
                group.append(label)
    if len(groups) <= 1:
        return next(iter(groups), None)
    if labels:
        return "; ".join(f"{', '.join(runs)}: {text}" for text, runs in groups.items())
    return "; ".join(f"{text} ({len(runs)} run{'s' if len(runs) > 1 else ''})" for text, runs in groups.items())


def _settings(config: LaunchConfig) -> str:
    """The settings that differ from the defaults, less the interpreter: a fact of its own."""
    return config.replace(python=LaunchConfig().python).summary()


def environment_facts(records: Sequence[RunRecord], labels: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """Where these runs ran (TensorFlow, Python, CPU, GPUs) and with which interpreter,
    read from the runs themselves."""
    if not records:
        return []
    environment = _each(records, lambda r: r.environment_line if r.environment else None, labels)
    return [("Environment", environment or records[0].environment_line),
            ("Interpreter", _each(records, lambda r: r.config.python, labels) or "")]


def series(record: RunRecord, label: str, rows: Sequence[str] | None = None) -> Series:
    """One run as the charts draw it; `rows`, the bar groups shared by the runs compared."""
    return Series(label, record.offsets(), list(record.samples), record.peak_rss,
                  bar_values(record, rows if rows is not None else time_rows([record])), record.gaps(),
                  list(record.gpu_samples), record.allocator_peaks)


def run_review(record: RunRecord, profile: str | None = None) -> Review:
    ident = f"run #{record.history_id}" if record.history_id is not None else "run"
    title = f"{record.subject}: {record.status_line}"
    facts = [("Settings", _settings(record.config)), *environment_facts([record])]
    if record.model.params is not None:
        size = f", {format_bytes(record.model.bytes_on_disk)} on disk" if record.model.bytes_on_disk else ""
        kind = f"{record.model.format} with" if record.model.format else "With"
        facts.insert(0, ("Model", f"{kind} {record.model.params:,} parameters{size}"))
    if profile:
        facts.insert(0, ("Profile", profile))
    facts.append(("Time to ready", format_duration(record.time_to_ready)))
    facts.append(("Peak memory (process tree)", format_bytes(record.peak_rss)))
    if gpu_line := gpu_memory_line(record):
        facts.append(("Peak GPU memory (process tree)", gpu_line))
    if reads := reads_line(record):
        facts.append(("Reads", reads))
    if record.page_cache is not None:
        facts += [("Page cache", note) for note in record.launch_notes if note.startswith("Page cache")]
    if record.imports is not None:
        facts.append(("Import X-ray", import_line(record.imports)))
        facts += [("Import warning", flag) for flag in import_flags(record.imports, record.config.python)]
    if record.failure is not None:
        facts.append(("Failure", record.failure.message))
    if record.steady_line:
        facts.append(("Steady latency", record.steady_line))
    if record.inputs_line:
        facts.append(("Inputs", record.inputs_line + (f" via signature {record.model.signature}"
                                                      if record.model.signature else "")))
    facts += [("Warning", warning) for warning in record.warnings]
    if record.is_program:
        facts.insert(0, ("Program", shlex.join(record.config.program) + f" (until {record.config.until}"
                         + (", stopped there" if record.stopped_at_ready else "") + ")"))
        if record.marks:
            facts.append(("Marks", ", ".join(f"{n} at {format_duration(at)}" for n, at in record.marks[:12])))
    facts += [("Note", note) for note in record.notes if record.is_program]
    per_call = record.latency.get("median") if record.latency.get("n") else None
    unit = step_unit(record.phases)
    rows: list[list[str]] = []
    data: list[list[Cell]] = []
    for name in timeline_rows(record.phase_order):
        if name == OTHER:
            if record.other_time is not None:
                rows.append([OTHER_LABEL, format_duration(record.other_time), "–", "–"])
                data.append([OTHER_LABEL, record.other_time, None, None, None])
            continue
        p = record.phases[name]
        state = "" if p.state is PhaseState.DONE else f" ({p.state.value})"
        row_name = label(name) + (f" ({p.count})" if p.count is not None else "") + state
        shown = format_duration(p.duration)
        if name == STEADY and per_call is not None:  # per call, as everywhere: a total depends on how many
            shown = f"{format_duration(per_call)}/{unit}"
        rows.append([row_name, shown, format_bytes(p.rss), format_bytes(p.peak_rss)])
        data.append([row_name, p.duration, per_call if name == STEADY else None, p.rss, p.peak_rss])
        if record.anatomy is not None and record.anatomy.phase == name:  # the profiled run's parts, under their phase
            for part, seconds, _ in anatomy_rows(record.anatomy):
                rows.append([f"  · {part}", format_duration(seconds), "", ""])
                data.append([f"{label(name)}: {part}", seconds, None, None, None])
    if record.run_anatomy is not None:
        facts.append(("Anatomy", source_line(record.run_anatomy)))
    return Review("run", title, f"{ident}, {_date(record.launched_at)}", facts, [series(record, ident)],
                  (["Phase", "Duration", "RSS at end", "Peak RSS"], rows),
                  data=(["Phase", "Duration (s)", "Per call (s)", "RSS at end (bytes)", "Peak RSS (bytes)"], data),
                  file_stem=f"tflaunch-run-{slug(record.subject)}-{_stamp(record.launched_at)}")


def comparison_review(records: Sequence[RunRecord], baseline: int = 0) -> Review:
    """Runs compared side against side (sides.py): each setting's median, range and number
    of runs; a difference is claimed only where both sides have runs enough and their
    ranges do not overlap. `baseline`: the index of a run of the baseline side."""
    labels = [run_ident(r, i) for i, r in enumerate(records)]
    sides = sides_of(records)
    base_side = next(i for i, side in enumerate(sides) if records[baseline] in side.runs)
    # Interpreters are long paths: a fact of their own by side letter, not in every label.
    names = side_labels(sides, leave_out=("python",))
    base = records[baseline]
    rows = rows_for(records)
    figures = differences(sides, (*rows, "ready"), base_side)
    phase_rows = [row for row in rows if row != "ready"]
    # A side by its letter and the settings that tell it apart ("B intra=2"); its runs are a fact.
    short = [f"{side.letter} {name[len(side.ident):].strip()}".strip() for side, name in zip(sides, names, strict=True)]
    sided = [label + (" (baseline)" if i == base_side else "") for i, label in enumerate(short)]
    # The sides' summary, one row each (the picture's table: it holds eight sides), then each
    # phase's medians (the picture draws them as bars; the Markdown has their figures).
    header = ["Side", "Runs", "Ready, median", "Ready, min–max", "vs baseline", "Peak memory"]
    table = []
    for i, (side, side_figures) in enumerate(zip(sides, figures, strict=True)):
        ready = side_figures["ready"]
        peak = summarize(r.peak_rss for r in side.runs)
        table.append([sided[i], str(side.n), format_duration(ready.value.median if ready.value else None),
                      spread_text(ready.value), "baseline" if i == base_side else ready.versus(),
                      format_bytes(peak.median if peak else None)])
    phases = (["Phase", *sided], [[row_label(row), *[measured(side_figures[row].value) for side_figures in figures]]
                                  for row in phase_rows])
    differing = own_settings_differ([side.runs[0] for side in sides])
    side_of = {id(r): side for side in sides for r in side.runs}
    counted = "; ".join(f"{side.letter}: {side.ident} ({side.n} run{'s' if side.n > 1 else ''}"
                        + (", baseline)" if i == base_side else ")") for i, side in enumerate(sides))
    letters = [side_of[id(r)].letter for r in records]
    models = {r.subject_type for r in records} == {Subject.MODEL}
    facts = [("Model" if models else "Subject", _each(records, subject_words, letters) or base.subject),
             *environment_facts(records, letters), ("Runs compared", counted),
             ("Settings that differ", "; ".join(
                 f"{name}: " + " / ".join(f"{side.letter} {value}" for side, value in zip(sides, _words(name, sides),
                                                                                           strict=True))
                 for name in differing if name != "python")
              + ("; interpreter: each side's, above" if "python" in differing else "")
              or "none (the same settings, run again)")]
    if note := too_few_note(sides):
        facts.append(("Spread", note))
    # GPU peaks as a fact, not table rows: the image's table has room for the phases only.
    if any(gpu_memory_line(r) for r in records):
        facts.append(("Peak GPU memory (process tree)",
                      "; ".join(f"{label}: {gpu_memory_line(r) or 'no GPU'}" for label, r in zip(labels, records,
                                                                                                strict=True))))
    # One row a run, one unit a column: what a spreadsheet sums and charts.
    memory = memory_rows(records)
    data_header = ["Run", "Side", "Settings", "Baseline", *[f"{row_label(row)} (s)" for row in rows],
                   *[f"{label} (bytes)" for label, _ in memory]]
    data: list[list[Cell]] = [[label, side_of[id(r)].letter, r.config.summary(), side_of[id(r)] is sides[base_side],
                               *[row_value(r, row) for row in rows], *[sizes[i] for _, sizes in memory]]
                              for i, (label, r) in enumerate(zip(labels, records, strict=True))]
    bars = time_rows(records)
    subject = subjects_title(records)  # the runs' own subjects, never the baseline's alone
    if len(sides) == len(records):
        title = f"{subject}: {len(records)} runs compared"
    elif len(sides) == 1:
        title = f"{subject}: {len(records)} runs of one setting"
    else:
        title = f"{subject}: {len(sides)} settings compared, {len(records)} runs"
    return Review("comparison", title, _dates(records), facts,
                  [side_series(side, f"{side.letter}: {name}", bars) for side, name in zip(sides, names, strict=True)],
                  (header, table), headline(sides, short, base_side),
                  data=(data_header, data), phases=phases,
                  file_stem=f"tflaunch-compare-{len(records)}-runs-{_stamp(max(r.launched_at for r in records))}")


def _words(name: str, sides: Sequence[Side]) -> list[str]:
    """A setting's value on each side in words; paths as the ends that tell them apart
    (the whole interpreter is a fact of its own)."""
    if name in ("model", "python"):
        return short_values([side.config for side in sides], name)
    return [setting_text(name, getattr(side.config, name)) for side in sides]


def side_series(side: Side, label: str, rows: Sequence[str]) -> Series:
    """A side as the charts draw it: each bar its runs' median, with their range where
    there is more than one run; memory curves of its typical run."""
    drawn = series(side.typical, label, rows)
    drawn.bars = {row: (s.median if (s := side.spread(row)) else None) for row in rows}
    drawn.ranges = {row: (s.low, s.high) for row in rows if (s := side.spread(row)) is not None and s.n > 1}
    drawn.runs = side.n
    return drawn


def sweep_review(sweep: Sweep, runs: Sequence[RunRecord] | RunRecord | None, sweep_id: int | None = None) -> Review:
    """The review of a sweep, its date and environment read from `runs`: the sweep's own
    runs (all of them, or one at least), never whatever else is on show."""
    records = [runs] if isinstance(runs, RunRecord) else list(runs or ())
    objective = sweep.plan.objective
    results = sweep.results()
    facts = [("Model", sweep.plan.base.subject), ("Settings", _settings(sweep.plan.base)),
             ("Plan", sweep.plan.describe(len(sweep.candidates))),
             ("Trials run", f"{sweep.trials_run} (all {sweep.planned_without_racing} without racing)"),
             *(environment_facts(records) or [("Interpreter", sweep.plan.base.python)])]
    ident = f"sweep #{sweep_id}" if sweep_id is not None else "sweep"
    if records:
        ident += f", {_dates(records)}"
    return Review("sweep", f"{sweep.plan.base.subject}: which settings start it fastest", ident, facts,
                  [], result_rows(results, objective),
                  outcome(results, objective),
                  [(r.candidate.key, list(r.values), r.stopped is not None) for r in results], objective,
                  data=_sweep_data(results, objective),
                  file_stem=f"tflaunch-sweep-{slug(sweep.plan.base.subject)}"
                            + (f"-{_stamp(min(r.launched_at for r in records))}" if records else ""),
                  instances=instances_rows(sweep.instance_rows()) if sweep.plan.shows_instances else None)


def _sweep_data(results: Sequence[CandidateResult], objective: str) -> tuple[list[str], list[list[Cell]]]:
    unit = "bytes" if objective == "peak" else "s"

    def number(value: float | None) -> Cell:
        return round(value) if unit == "bytes" and value is not None else value

    header = ["#", "Setting", "Baseline", f"Median {objective_words(objective)} ({unit})", f"Min ({unit})",
              f"Max ({unit})", f"IQR ({unit})", "vs baseline (×)", "vs baseline, 95% CI low (×)",
              "vs baseline, 95% CI high (×)", "Runs", "Failed runs", "Stopped early", "Note"]
    rows: list[list[Cell]] = []
    for rank, r in enumerate(results, start=1):
        s, ratio = r.spread, r.ratio
        rows.append([rank, r.candidate.key, r.candidate.baseline,
                     number(s.median if s else None), number(s.low if s else None), number(s.high if s else None),
                     number(s.iqr if s else None), ratio.estimate if ratio else None, ratio.low if ratio else None,
                     ratio.high if ratio else None, s.n if s else 0, r.failures, r.stopped is not None, r.note])
    return header, rows


def profile_review(name: str, evidence: dict[str, Any], config: LaunchConfig) -> Review:
    phases = evidence.get("phases") or {}
    start, spans = 0.0, {}
    for phase, figures in phases.items():  # in the order the evidence's runs reported them
        if phase != OTHER and isinstance(figures, dict) and isinstance(figures.get("median"), (int, float)):
            spans[phase] = (start, figures["median"])
            start += figures["median"] if phase not in AFTER_READY else 0.0
    facts = [("Settings", config.summary())] + [("Evidence", line) for line in describe_evidence(evidence)]
    shown = {p: v for p, v in phases.items() if isinstance(v, dict) and (p == OTHER or NAME.match(p))}
    rows = [[_other_or_label(p), *(format_duration(v.get(key)) for key in ("median", "min", "max"))]
            for p, v in shown.items()]
    data: list[list[Cell]] = [[_other_or_label(p), v.get("median"), v.get("min"), v.get("max")]
                              for p, v in shown.items()]
    return Review("profile", f"Launch profile {name}",
                  f"{evidence.get('model', config.model)}, {evidence.get('date', '')}", facts,
                  [Series("median of the evidence runs", spans, [], evidence.get("peak_rss_bytes_median"))],
                  (["Phase", "Median", "Min", "Max"], rows),
                  data=(["Phase", "Median (s)", "Min (s)", "Max (s)"], data),
                  file_stem=f"tflaunch-profile-{slug(name)}")


def _other_or_label(name: str) -> str:
    return OTHER_LABEL if name == OTHER else label(name)
