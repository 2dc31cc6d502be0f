"""A strict loader of Chrome Trace Event files, as Perfetto's importer is strict: what a trace
viewer would refuse or draw wrongly raises TraceError here.

Checked: the file is JSON (gzipped when its name ends .gz) with a `traceEvents` list and no
top-level `metadata` key; every event has a known phase type, integer pid/tid and a
timestamp in whole microseconds; `X` slices have a duration >= 0 and nest strictly on each
thread (a slice either holds another or ends before it starts); `C` counters carry numbers;
`M` events are the names viewers know. Returns the events grouped for the tests' questions.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KNOWN_METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}
PHASE_TYPES = {"X", "i", "C", "M"}


class TraceError(AssertionError):
    pass


@dataclass
class LoadedTrace:
    slices: dict[tuple[int, int], list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    instants: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    counters: dict[int, dict[str, list[tuple[int, float]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    processes: dict[int, str] = field(default_factory=dict)
    labels: dict[int, str] = field(default_factory=dict)
    threads: dict[tuple[int, int], str] = field(default_factory=dict)

    def process_slices(self, pid: int) -> list[dict[str, Any]]:
        return [s for (p, _), slices in self.slices.items() if p == pid for s in slices]

    def phase_slices(self, pid: int) -> dict[str, dict[str, Any]]:
        """{phase name: its slice} of one process."""
        return {s["args"]["phase"]: s for s in self.process_slices(pid) if s.get("cat") == "phase"}

    def children(self, pid: int, outer: dict[str, Any]) -> list[dict[str, Any]]:
        """Slices directly or deeper inside `outer` on its own thread."""
        return [s for s in self.slices[(pid, outer["tid"])] if s is not outer
                and outer["ts"] <= s["ts"] and s["ts"] + s["dur"] <= outer["ts"] + outer["dur"]]


def _integer(event: dict[str, Any], key: str) -> int:
    value = event.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TraceError(f"{key} is not a whole, non-negative number of microseconds in {event}")
    return value


def check_nesting(slices: list[dict[str, Any]], where: str) -> None:
    """Each slice ends before the next starts, or holds it (Perfetto: 'slices must nest')."""
    stack: list[dict[str, Any]] = []
    for s in sorted(slices, key=lambda s: (s["ts"], -s["dur"])):
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= s["ts"]:
            stack.pop()
        if stack and s["ts"] + s["dur"] > stack[-1]["ts"] + stack[-1]["dur"]:
            raise TraceError(f"{where}: {s['name']!r} [{s['ts']}, {s['ts'] + s['dur']}] overlaps "
                             f"{stack[-1]['name']!r} [{stack[-1]['ts']}, {stack[-1]['ts'] + stack[-1]['dur']}]")
        stack.append(s)


def load(path: Path) -> LoadedTrace:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    data = json.loads(raw)
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise TraceError("no traceEvents list at the top")
    if "metadata" in data:
        raise TraceError("a top-level 'metadata' key (Perfetto refuses the file)")
    out = LoadedTrace()
    for event in data["traceEvents"]:
        ph = event.get("ph")
        if ph not in PHASE_TYPES:
            raise TraceError(f"unknown event type {ph!r}")
        pid, tid = _integer(event, "pid"), _integer(event, "tid")
        if not isinstance(event.get("name"), str) or not event["name"]:
            raise TraceError(f"an event without a name: {event}")
        if ph == "M":
            if event["name"] not in KNOWN_METADATA:
                raise TraceError(f"metadata a viewer does not know: {event['name']}")
            if event["name"] == "process_name":
                out.processes[pid] = event["args"]["name"]
            elif event["name"] == "process_labels":
                out.labels[pid] = event["args"]["labels"]
            elif event["name"] == "thread_name":
                out.threads[(pid, tid)] = event["args"]["name"]
            continue
        ts = _integer(event, "ts")
        if ph == "X":
            _integer(event, "dur")
            out.slices[(pid, tid)].append(event)
        elif ph == "i":
            if event.get("s") not in ("g", "p", "t"):
                raise TraceError(f"an instant without a scope: {event}")
            out.instants[pid].append(event)
        else:
            values = event.get("args", {})
            if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                     for v in values.values()):
                raise TraceError(f"a counter without numbers: {event}")
            for key, value in values.items():
                out.counters[pid][f"{event['name']} {key}"].append((ts, value))
    for (pid, tid), slices in out.slices.items():
        check_nesting(slices, f"pid {pid} tid {tid}")
    return out
