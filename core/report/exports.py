"""Every file format tflaunch writes, in one table (as hyperfine's ExportType): `--format`'s
choices, the format a file's name implies and the app's file-dialog filters are made here.

Two things are exported: stored *runs* (their data: JSON, CSV, a Chrome trace) and a
*review* (what a view shows: an image, Markdown, CSV). A format says which it takes and
how it is written; PNG and SVG are drawn by the app's renderer (core never imports Qt), so
their writer is None here. A name ending in `.gz` is written gzipped, whatever the format
(Perfetto and chrome://tracing open `trace.json.gz` as they are).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from .review import Review
from .run_export import ExportedRun, run_dict, to_csv
from .trace_export import trace_json

Of = Literal["runs", "review"]
RUNS: Of = "runs"
REVIEW: Of = "review"

RunsWriter = Callable[[Sequence[ExportedRun], str], str]  # (runs, the history they came from) -> text
ReviewWriter = Callable[[Review], str]
TRACE = "trace"  # the format's name (also a phase's: never compared with one)


def runs_json(runs: Sequence[ExportedRun], history: str) -> str:
    """The one JSON of stored runs: each as `tflaunch bench --json` prints it (run_dict),
    with the history it came from."""
    return json.dumps({"history": history, "runs": [run_dict(r) for r in runs]}, indent=2) + "\n"


def _runs_csv(runs: Sequence[ExportedRun], history: str) -> str:
    return to_csv(runs)


def _runs_trace(runs: Sequence[ExportedRun], history: str) -> str:
    return trace_json([(run.summary.id, run.record) for run in runs if run.record is not None])


@dataclass(frozen=True)
class Format:
    """One way to write a file: its `--format` name, what it exports, the names it is
    guessed from (without the dot; the longest match wins) and its words in a file dialog."""

    name: str
    of: Of
    suffixes: tuple[str, ...]
    label: str
    write_runs: RunsWriter | None = None
    write_review: ReviewWriter | None = None
    larger: tuple[tuple[str, int], ...] = ()  # an image's other sizes: (label, scale), a filter each
    damaged_rows: bool = True  # a run that cannot be read is written as what is known of it (not in a trace)

    def filters(self) -> list[tuple[str, int]]:
        """(file-dialog filter, scale) for this format."""
        patterns = " ".join(f"*.{s}" for s in self.suffixes)
        return [(f"{label} ({patterns})", scale) for label, scale in ((self.label, 1), *self.larger)]


FORMATS: tuple[Format, ...] = (
    Format("json", RUNS, ("json",), "JSON, every figure of each run", write_runs=runs_json),
    Format("csv", RUNS, ("csv",), "CSV, a row per run", write_runs=_runs_csv),
    Format(TRACE, RUNS, ("trace.json", "trace.json.gz"), "Chrome trace (Perfetto, chrome://tracing)",
           write_runs=_runs_trace, damaged_rows=False),
    Format("png", REVIEW, ("png",), "PNG image, 1600×900", larger=(("PNG image at 2×, 3200×1800", 2),)),
    Format("svg", REVIEW, ("svg",), "SVG vector image"),
    Format("md", REVIEW, ("md",), "Markdown", write_review=Review.markdown),
    Format("csv", REVIEW, ("csv",), "CSV", write_review=Review.csv),
)


def formats(of: Of) -> tuple[Format, ...]:
    return tuple(f for f in FORMATS if f.of == of)


def names(of: Of) -> tuple[str, ...]:
    """`--format`'s choices."""
    return tuple(f.name for f in formats(of))


def find(of: Of, name: str) -> Format:
    """The format called `name`; ValueError naming the choices when there is none."""
    for fmt in formats(of):
        if fmt.name == name:
            return fmt
    raise ValueError(f"cannot write {'runs' if of == RUNS else 'a review'} as '{name}': use "
                     f"{', '.join(names(of)[:-1])} or {names(of)[-1]}")


def guess(of: Of, path: str | PurePath) -> Format | None:
    """The format a file's name says (run.trace.json.gz: trace), None when it says none of
    them (no extension, or a dot inside a name: review-v1.2)."""
    name = PurePath(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    found = [(len(s), f) for f in formats(of) for s in f.suffixes if name.endswith("." + s.removesuffix(".gz"))]
    return max(found, key=lambda pair: pair[0])[1] if found else None


def file_filters(of: Of) -> list[tuple[str, Format, int]]:
    """(filter text, format, scale) for a save dialog, in the table's order."""
    return [(text, fmt, scale) for fmt in formats(of) for text, scale in fmt.filters()]


def encoded(text: str, path: str | PurePath) -> bytes:
    """The bytes to write for `text` at `path`: gzipped when the name ends in .gz.
    mtime=0: the same runs give the same file."""
    data = text.encode("utf-8")
    return gzip.compress(data, mtime=0) if str(path).lower().endswith(".gz") else data
