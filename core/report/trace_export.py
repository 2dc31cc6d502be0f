"""Runs as a Chrome Trace Event file, the JSON that Perfetto (ui.perfetto.dev) and
chrome://tracing open: several runs side by side, each its own process track, all timed
from their own launch (so their phases line up at zero).

The mapping (microseconds throughout, integers, so a slice's `dur` is the record's phase
duration rounded to the microsecond and nothing else):
- a root `X` slice per run, from launch to its end, whose args hold the settings, the
  versions and the figures; the same said short as the process's `M` labels;
- each phase an `X` slice. Trace viewers need the slices of one thread to nest strictly,
  and a program's phases overlap (`data` inside `first_step` can end after it by a few
  microseconds; `build` is a hull that can hold `compile`): a slice goes on the first
  thread where it nests, else on a new one, decided on the integers written;
- a phase's parts (devices on a GPU machine) and the anatomy's parts (the first step or
  call of a profiled run) as `X` slices inside it, laid end to end in their listed order:
  they are totals with no start of their own, which the args say;
- marks and the ready point as `i` instants; memory (RSS, GPU per device) as `C` counters.
`retraces` is a count with a time, not a span (its record invents a start): it goes into
the root slice's args, never drawn as a bar. No top-level `metadata` key: Perfetto refuses it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..phases import PART_LABELS, RETRACES, label
from ..run.anatomy import NOT_ATTRIBUTED_LABEL, part_label
from ..run.record import RunRecord
from ..run.record_json import config_dict
from ..units import format_duration

US_PER_S = 1_000_000
ROUNDING_US = 1  # how far two reported instants can round apart: a start may move this much
# Spans that are not spans: drawn nowhere, said in the root slice's args.
NOT_A_SPAN = frozenset({RETRACES})


def microseconds(seconds: float) -> int:
    """A time or duration in the trace's unit: whole microseconds."""
    return round(seconds * US_PER_S)


@dataclass
class Slice:
    """An X event before it is placed on a thread."""

    name: str
    ts: int
    dur: int
    cat: str
    args: dict[str, Any] = field(default_factory=dict)
    tid: int = 0

    @property
    def end(self) -> int:
        return self.ts + self.dur

    def holds(self, other: Slice) -> bool:
        return self.ts <= other.ts and other.end <= self.end


class Tracks:
    """Threads of one process, each a stack of slices that nest strictly."""

    def __init__(self) -> None:
        self.open: list[list[Slice]] = []  # per thread (tid = index + 1): the slices still open
        self.placed: list[Slice] = []

    def place(self, piece: Slice) -> int:
        """Put `piece` on the first thread where it nests; else where it nests once started
        a rounding step later (one phase's end and the next one's start, read by two clocks,
        can round to overlap by 1 µs: the start moves, the duration stays); else on a new
        thread. Slices must come in order of start, the longer first at the same start."""
        for tid, stack in enumerate(self.open, start=1):
            while stack and stack[-1].end <= piece.ts:
                stack.pop()
            if not stack or stack[-1].holds(piece):
                return self.put(piece, tid)
        for tid, stack in enumerate(self.open, start=1):
            if not stack or not 0 < stack[-1].end - piece.ts <= ROUNDING_US:
                continue
            moved = Slice(piece.name, stack[-1].end, piece.dur, piece.cat)
            holder = _holder(stack, moved)
            if holder is None or holder.holds(moved):
                piece.args["start_moved_us"] = moved.ts - piece.ts
                piece.ts = moved.ts
                while stack and stack[-1].end <= piece.ts:
                    stack.pop()
                return self.put(piece, tid)
        return self.put(piece, self.new_thread())

    def new_thread(self) -> int:
        self.open.append([])
        return len(self.open)

    def put(self, piece: Slice, tid: int) -> int:
        """On thread `tid`, the caller knowing it nests there."""
        piece.tid = tid
        self.open[tid - 1].append(piece)
        self.placed.append(piece)
        return tid

    def inside(self, outer: Slice) -> list[Slice]:
        """Slices already on `outer`'s thread within it."""
        return [s for s in self.placed if s is not outer and s.tid == outer.tid and outer.holds(s)]


def _holder(stack: list[Slice], piece: Slice) -> Slice | None:
    """The innermost open slice still open at `piece`'s start, if any."""
    return next((s for s in reversed(stack) if s.end > piece.ts), None)


def _end_s(record: RunRecord) -> float:
    """Where the run's root slice ends: its end, or whatever it measured last."""
    ends = [start + duration for start, duration in record.offsets().values()]
    ends += [t for t, _ in record.samples] + [t for t, _ in record.gpu_samples] + [t for _, t in record.marks]
    if record.finished_at is not None:
        ends.append(record.finished_at - record.launched_at)
    return max([0.0, *ends])


def _phase_slices(record: RunRecord, end_us: int) -> list[Slice]:
    out = []
    offsets = record.offsets()
    for name, phase in record.phases.items():
        if name in NOT_A_SPAN:
            continue
        args: dict[str, Any] = {"phase": name, "state": phase.state.value}
        for key, value in (("rss_bytes", phase.rss), ("peak_rss_bytes", phase.peak_rss),
                           ("read_bytes", phase.read_bytes), ("latency_s", phase.latency or None),
                           ("count", phase.count)):
            if value is not None:
                args[key] = value
        if name in offsets:
            start, duration = offsets[name]
            args["duration_s"] = duration
            out.append(Slice(label(name), microseconds(start), microseconds(duration), "phase", args))
        elif phase.started is not None and record.finished_at is not None:
            # Started and never ended (the phase the run failed or was stopped in): to the run's end.
            start_us = microseconds(max(0.0, phase.started - record.launched_at))
            out.append(Slice(f"{label(name)} (did not end)", start_us, max(0, end_us - start_us), "phase", args))
    return out


def _parts(outer: Slice, parts: Sequence[tuple[str, float, dict[str, Any]]], cat: str) -> list[Slice]:
    """Totals without a start, laid end to end from `outer`'s start in the order given,
    shrunk in proportion where they add up to more than `outer` (a profiled run's window
    measured by another clock), so they stay inside it."""
    total = sum(seconds for _, seconds, _ in parts)
    scale = min(1.0, outer.dur / microseconds(total)) if microseconds(total) > 0 else 1.0
    out, done = [], 0.0
    for name, seconds, args in parts:
        start = outer.ts + min(outer.dur, round(microseconds(done) * scale))
        done += seconds
        end = outer.ts + min(outer.dur, round(microseconds(done) * scale))
        if end > start:
            laid = {**args, "seconds": seconds, "laid_out": "a total, not when it ran: parts are laid end to end"}
            out.append(Slice(name, start, end - start, cat, laid))
    return out


def _anatomy_parts(record: RunRecord) -> list[tuple[str, float, dict[str, Any]]]:
    anatomy = record.anatomy
    if anatomy is None or anatomy.error is not None:
        return []
    parts = [(part_label(p.key), p.seconds, {"part": p.key, "made_of": [n.name for n in p.names]})
             for p in anatomy.parts]
    return [*parts, (NOT_ATTRIBUTED_LABEL, anatomy.not_attributed, {"part": "not_attributed"})]


def _place_inside(tracks: Tracks, outer: Slice, parts: list[Slice], what: str) -> list[tuple[int, str]]:
    """Parts on `outer`'s own thread when nothing else nests there; else on a thread of
    their own under a copy of `outer` (so they never cut through another phase)."""
    if not parts:
        return []
    if not tracks.inside(outer):  # its thread holds nothing within it: the parts, end to end, nest
        for part in parts:
            tracks.put(part, outer.tid)
        return []
    holder = Slice(f"{outer.name} ({what})", outer.ts, outer.dur, what, {"parts_of": outer.args.get("phase")})
    tid = tracks.put(holder, tracks.new_thread())
    for part in parts:
        tracks.put(part, tid)
    return [(tid, f"{outer.name}: {what}")]


def _root_args(record: RunRecord, run_id: int | None) -> dict[str, Any]:
    args: dict[str, Any] = {
        "run_id": run_id, "subject": record.subject, "status": record.status.value,
        "time_to_ready_s": record.time_to_ready, "other_s": record.other_time, "peak_rss_bytes": record.peak_rss,
        "settings": config_dict(record), "read_back": record.settings.to_dict(),
        "versions": _versions(record),
    }
    for name in NOT_A_SPAN:
        phase = record.phase(name)
        if phase is not None:
            args[name] = {"count": phase.count, "seconds": phase.duration}
    if record.failure is not None:
        args["failure"] = {"kind": record.failure.kind, "phase": record.failed_phase,
                           "message": record.failure.message}
    if record.launch_notes:
        args["launch_notes"] = list(record.launch_notes)
    return args


def _versions(record: RunRecord) -> dict[str, str]:
    """Short facts of the environment, shown in the process's label and its args: those the child said."""
    env = record.environment
    return {k: v for k, v in (("tensorflow", env.tensorflow), ("keras", env.keras), ("python", env.python),
                              ("cuda", env.cuda), ("cudnn", env.cudnn), ("platform", env.platform)) if v}


def _labels(record: RunRecord) -> str:
    versions = [f"{k} {v}" for k, v in _versions(record).items()]
    ready = f"ready {format_duration(record.time_to_ready)}" if record.time_to_ready is not None else ""
    return ", ".join(x for x in (record.status.value, ready, *versions, record.config.summary()) if x)


def run_events(record: RunRecord, pid: int, run_id: int | None) -> list[dict[str, Any]]:
    """One run's events: its process's metadata, slices, instants and counters."""
    end_us = microseconds(_end_s(record))
    name = f"Run {run_id}: {record.subject}" if run_id is not None else f"Run: {record.subject}"
    root = Slice(name, 0, end_us, "run", _root_args(record, run_id))
    tracks = Tracks()
    pieces = sorted([root, *_phase_slices(record, end_us)], key=lambda s: (s.ts, -s.dur))
    for piece in pieces:
        tracks.place(piece)
    threads = [(1, "phases"), *((tid, "phases (overlapping)") for tid in range(2, len(tracks.open) + 1))]
    by_phase = {s.args["phase"]: s for s in pieces if s.cat == "phase" and s.args.get("phase")}
    for phase_name, phase in record.phases.items():
        outer = by_phase.get(phase_name)
        if phase.parts and outer is not None:
            parts = [(PART_LABELS.get(k, k), v, {"part": k}) for k, v in
                     sorted(phase.parts.items(), key=lambda kv: list(PART_LABELS).index(kv[0])
                            if kv[0] in PART_LABELS else len(PART_LABELS))]
            threads += _place_inside(tracks, outer, _parts(outer, parts, "part"), "parts")
    anatomy_outer = by_phase.get(record.anatomy.phase) if record.anatomy is not None else None
    if anatomy_outer is not None:
        threads += _place_inside(tracks, anatomy_outer, _parts(anatomy_outer, _anatomy_parts(record), "anatomy"),
                                 "anatomy")

    events: list[dict[str, Any]] = [
        {"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}},
        {"ph": "M", "pid": pid, "tid": 0, "name": "process_labels", "args": {"labels": _labels(record)}},
        {"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": pid}},
    ]
    for tid, thread in threads:
        events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": thread}})
        events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}})
    events += [{"ph": "X", "pid": pid, "tid": s.tid, "name": s.name, "cat": s.cat, "ts": s.ts, "dur": s.dur,
                "args": s.args} for s in sorted(tracks.placed, key=lambda s: (s.tid, s.ts, -s.dur))]
    for mark, at in record.marks:
        events.append({"ph": "i", "s": "p", "pid": pid, "tid": 1, "name": mark, "cat": "mark",
                       "ts": microseconds(at), "args": {"mark": mark, "at_s": at}})
    if record.time_to_ready is not None:
        events.append({"ph": "i", "s": "p", "pid": pid, "tid": 1, "name": "ready", "cat": "ready",
                       "ts": microseconds(record.time_to_ready), "args": {"time_to_ready_s": record.time_to_ready}})
    events += [{"ph": "C", "pid": pid, "tid": 0, "name": "memory: process tree RSS", "cat": "memory",
                "ts": microseconds(t), "args": {"bytes": rss}} for t, rss in record.samples]
    events += [{"ph": "C", "pid": pid, "tid": 0, "name": f"memory: GPU {gpu}", "cat": "memory",
                "ts": microseconds(t), "args": {"bytes": size}}
               for t, used in record.gpu_samples for gpu, size in sorted(used.items())]
    return events


def trace_dict(runs: Iterable[tuple[int | None, RunRecord]]) -> dict[str, Any]:
    """The trace of `runs` ((history id or None, record)), one process each, in order."""
    events: list[dict[str, Any]] = []
    for pid, (run_id, record) in enumerate(runs, start=1):
        events += run_events(record, pid, run_id)
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def trace_json(runs: Iterable[tuple[int | None, RunRecord]]) -> str:
    # default=str: a stored value of an unexpected type is said, never a failed export.
    return json.dumps(trace_dict(runs), default=str, separators=(",", ":")) + "\n"
