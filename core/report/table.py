"""Plain-text tables of runs for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from ..grid import grid
from ..phases import ONE_TIME, OTHER, OTHER_LABEL, label, phase_rows, step_unit, timeline_rows
from ..probe.model.input_shapes import DEFAULTS_HELP
from ..run.anatomy import Anatomy, anatomy_rows, source_line
from ..run.reads import median_reads, phase_reads
from ..run.record import RunRecord, RunStatus
from ..run.words import gpu_memory_line, warm_notes
from ..stats import Spread, summarize
from ..units import format_bytes, format_duration


def describe_program(record: RunRecord) -> list[str]:
    config = record.config
    where = f" in {config.workdir}" if config.workdir else ""
    lines = [f"program {' '.join(config.program)}{where}, measured until {config.until}"
             + (f" and {config.steady} steady steps or calls" if config.steady and config.until != "exit" else "")]
    if record.marks:
        lines.append("marks: " + ", ".join(f"{name} at {format_duration(at)}" for name, at in record.marks[:20])
                     + (f" (and {len(record.marks) - 20} more)" if len(record.marks) > 20 else ""))
    return lines


def describe_run(record: RunRecord, per_run: Sequence[str] = ()) -> str:
    """The run's subject, settings, notes and environment; `per_run`: notes left out because
    they are said run by run (a repeat table's warm starts)."""
    if record.is_program:
        lines = describe_program(record) + [f"settings: {record.config.summary()}"]
        lines += [f"note: {n}" for n in record.notes if n not in per_run]
        if record.environment:
            lines.append(record.environment_line)
        return "\n".join(lines)
    model = record.model
    parts = [f"model {record.config.model}", f"called as {record.config.call}"]
    if model.params is not None:
        parts.append(f"{model.params:,} parameters")
    if model.bytes_on_disk:
        parts.append(f"{format_bytes(model.bytes_on_disk)} on disk")
    if model.signature:
        parts.append(f"signature {model.signature}")
    lines = [", ".join(parts), f"settings: {record.config.summary()}"]
    if record.inputs_line:
        lines.append(f"inputs: {record.inputs_line}")
    lines += [f"warning: {w}" for w in record.warnings]
    lines += [f"note: {n}" for n in record.notes]
    if record.assumed_inputs:
        lines.append(f"(defaults for unknown dimensions: {DEFAULTS_HELP})")
    if record.environment:
        lines.append(record.environment_line)
    return "\n".join(lines)


def _range(summary: Spread | None) -> str:
    """min – max, only where there are runs to span (one run has no range)."""
    if summary is None or summary.n < 2:
        return "–"
    return f"{format_duration(summary.low)} – {format_duration(summary.high)}"


def _latency_line(records: Sequence[RunRecord]) -> str | None:
    measured = [r for r in records if r.latency.get("n")]
    if not measured:
        return None
    if len(measured) == 1:
        return f"Steady latency: {measured[0].steady_line}"
    medians = [r.latency["median"] for r in measured]
    if measured[0].is_program:  # the program's own steps or calls, at the batch it chose
        unit = step_unit(measured[0].phases)
        return (f"Steady latency: median of the runs' medians {format_duration(median(medians))} per {unit} "
                f"({len(medians)} runs)")
    return (f"Steady latency: median of the runs' medians {format_duration(median(medians))} per call "
            f"(batch {measured[0].fed_batch}, {len(medians)} runs)")


def _label(record: RunRecord, name: str) -> str:
    p = record.phases[name]
    count = f" ({p.count})" if p.count is not None else ""
    return label(name) + count


def _anatomy_rows(anatomy: Anatomy | None, name: str, width: int) -> list[list[str]]:
    """The sub-rows of phase `name`: the anatomy's parts, from the profiled run it names."""
    if anatomy is None or anatomy.phase != name:
        return []
    return [[f"  · {label}", format_duration(seconds), *([""] * (width - 2))]
            for label, seconds, _ in anatomy_rows(anatomy)]


def anatomy_lines(anatomy: Anatomy | None, unprofiled: float | None) -> list[str]:
    """The anatomy's source and, per part, what made it (the largest event names)."""
    if anatomy is None:
        return []
    lines = [source_line(anatomy, unprofiled)]
    lines += [f"  {label}: {format_duration(seconds)}" + (f" ({what})" if what else "")
              for label, seconds, what in anatomy_rows(anatomy)]
    return lines


def run_table(record: RunRecord, anatomy: Anatomy | None = None) -> str:
    """A run's phases; `anatomy` (another run's, profiled) adds its parts under its phase."""
    own = anatomy is None  # the run's own anatomy (an anatomy run shown alone): no unprofiled figure beside it
    if own:
        anatomy = record.run_anatomy
    rows = []
    for name in timeline_rows(record.phase_order):
        if name == OTHER:
            if record.other_time is not None:
                rows.append([OTHER_LABEL, format_duration(record.other_time), "", "", ""])
            continue
        p = record.phases[name]
        state = "" if p.state.value == "done" else f" ({p.state.value})"
        rows.append([_label(record, name) + state, format_duration(p.duration), format_bytes(p.rss),
                     format_bytes(p.peak_rss), phase_reads(p)])
        rows += [[f"  {record.part_label(part)}", format_duration(seconds), "", "", ""]
                 for part, seconds in p.parts.items()]
        if name == record.ready_phase and record.first_call_overhead is not None:
            rows.append([f"  {ONE_TIME}", format_duration(record.first_call_overhead), "", "", ""])
        rows += _anatomy_rows(anatomy, name, 5)
    text = grid(["Phase", "Duration", "RSS at end", "Peak RSS", "Read from storage"], rows)
    footer = [f"Time to ready: {format_duration(record.time_to_ready)}",
              f"Peak memory (process tree): {format_bytes(record.peak_rss)}"]
    if gpu_line := gpu_memory_line(record):
        footer.append(f"Peak GPU memory (process tree): {gpu_line}")
    latency = _latency_line([record])
    if latency:
        footer.append(latency)
    phase = record.phase(anatomy.phase or "") if anatomy is not None else None
    unprofiled = phase.duration if phase is not None and not own else None
    footer += anatomy_lines(anatomy, unprofiled)
    return "\n".join([describe_run(record), "", text, "", *footer])


def repeat_table(records: Sequence[RunRecord], anatomy: Anatomy | None = None) -> str:
    """Runs' medians per phase; `anatomy` (an extra, profiled run's) adds its parts under its phase."""
    ok = [r for r in records if r.status is RunStatus.OK]
    rows = []
    for name in timeline_rows(phase_rows(ok or records)):
        if name == OTHER:
            other = summarize(r.other_time for r in ok)
            rows.append([OTHER_LABEL, format_duration(other.median if other else None), _range(other), "", "", ""])
            continue
        reached = [p for p in (r.phase(name) for r in ok) if p is not None]
        d = summarize(p.duration for p in reached)
        rss = summarize(p.rss for p in reached)
        peak = summarize(p.peak_rss for p in reached)
        rows.append([
            label(name),
            format_duration(d.median if d else None),
            _range(d) + (f" ({len(reached)} of {len(ok)} runs)" if d and len(reached) < len(ok) else ""),
            format_bytes(rss.median if rss else None),
            format_bytes(peak.median if peak else None),
            median_reads(ok, name),
        ])
        rows += _anatomy_rows(anatomy, name, 6)
    ready = summarize(r.time_to_ready for r in ok)
    text = grid(["Phase", "Median", "Min – max", "RSS at end", "Peak RSS", "Read (median)"], rows)
    footer = [f"Runs: {len(ok)} of {len(records)} succeeded"]
    if ready:
        footer.append(f"Time to ready: median {format_duration(ready.median)} "
                      f"(min {format_duration(ready.low)}, max {format_duration(ready.high)})")
    latency = _latency_line(ok)
    if latency:
        footer.append(latency)
    if anatomy is not None:
        measured = summarize(p.duration for p in (r.phase(anatomy.phase or "") for r in ok) if p is not None)
        footer += anatomy_lines(anatomy, measured.median if measured else None)
    # A warm launch's own start (cold and why, or paying for its server) differs from run to
    # run: said for each run it concerns, never as if it were every run's; a note every run
    # has (a warm start's session) is said once, with the others.
    notes = [warm_notes(record) for record in records]
    everyone = set.intersection(*(set(n) for n in notes)) if notes else set()
    per_run = [(i, note) for i, run_notes in enumerate(notes, start=1) for note in run_notes if note not in everyone]
    footer += [f"run {i}: {note}" for i, note in per_run]
    head = describe_run(ok[0] if ok else records[0], [note for _, note in per_run])
    return "\n".join([head, "", text, "", *footer])
