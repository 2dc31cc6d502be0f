"""Runs side by side: per-phase differences against a baseline, and which settings differ."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields

from ..phases import AFTER_READY, OTHER, OTHER_LABEL, STEADY, label, phase_rows, short_label
from ..run.record import RunRecord
from ..settings.config import LaunchConfig
from ..settings.display import setting_text, short_value
from ..settings.vocabulary import BY_NAME
from ..subject import Subject
from ..units import format_duration
from .subjects import own_config, own_settings_differ, reads, subject_words
from .subjects import unread as unread_by

# Rows of a comparison: the phases up to ready that any run reported, the time between
# them, time to ready; then steady latency per call (a phase total would compare 20 calls
# with 20 calls of another batch size), and per sample where the batch sizes differ.
# Runs are matched by phase name: a model's and a program's line up on spawn, import,
# devices and load, and a phase one run lacks shows "—" and gives no difference.
_ROW_LABELS = {OTHER: OTHER_LABEL, "ready": "Time to ready", "steady_call": "Steady, per call or step",
               "steady_sample": "Steady, per sample"}


def row_label(row: str) -> str:
    """A comparison's row as its table names it: a phase's label, or what the row measures."""
    return _ROW_LABELS.get(row) or label(row)


def short_row_label(row: str) -> str:
    """A row on a chart's axis, where eight long labels would run into each other."""
    return "Ready" if row == "ready" else short_label(row)


def time_rows(runs: Sequence[RunRecord]) -> tuple[str, ...]:
    """The phases up to ready that any of the runs reported (their union, in order), then
    other and time to ready. Steady state is up to ready where every run was measured to its
    exit (its steps ran before the ready point: the fold counts them, not as Other)."""
    to_exit = bool(runs) and all(r.config.until == "exit" and r.is_program for r in runs)
    after = AFTER_READY - {STEADY} if to_exit else AFTER_READY
    return (*(n for n in phase_rows(runs) if n not in after), OTHER, "ready")

SAME_WITHIN_S = 50e-6  # below what a phase's clock can tell apart: shown as "same"
RATIO_FROM_S = 1e-3  # ratios only between times of a millisecond or more


@dataclass(frozen=True)
class Delta:
    value: float | None
    baseline: float | None

    @property
    def difference(self) -> float | None:
        return None if self.value is None or self.baseline is None else self.value - self.baseline

    @property
    def ratio(self) -> float | None:
        """How many times faster than the baseline (above 1 is better)."""
        if self.value is None or self.baseline is None or self.value <= 0:
            return None
        return self.baseline / self.value

    def describe(self) -> str:
        if self.difference is None:
            return format_duration(self.value)
        if abs(self.difference) < SAME_WITHIN_S:
            return f"{format_duration(self.value)} (same)"
        sign = "+" if self.difference >= 0 else "−"
        ratio = ""
        # A ratio of two near-zero times ("1048576.00× faster") says nothing.
        if self.ratio and self.value is not None and self.baseline is not None \
                and min(self.value, self.baseline) >= RATIO_FROM_S:
            ratio = f", {self.ratio:.2f}× faster" if self.ratio >= 1 else f", {1 / self.ratio:.2f}× slower"
        return f"{format_duration(self.value)} ({sign}{format_duration(abs(self.difference))}{ratio})"


def row_value(record: RunRecord, row: str) -> float | None:
    if row == "ready":
        return record.time_to_ready
    if row == OTHER:
        return record.other_time
    if row in ("steady_call", "steady_sample"):
        median = record.latency.get("median") if record.latency.get("n") else None
        return None if median is None else median / (record.fed_batch if row == "steady_sample" else 1)
    phase = record.phase(row)
    return phase.duration if phase is not None else None


def rows_for(runs: Sequence[RunRecord]) -> tuple[str, ...]:
    """The rows worth showing for these runs: per sample only where a model's batch sizes
    differ (a program chooses its own batch: none is known)."""
    if len({r.fed_batch for r in runs}) > 1 and not any(r.is_program for r in runs):
        return (*time_rows(runs), "steady_call", "steady_sample")
    return (*time_rows(runs), "steady_call")


def bar_values(record: RunRecord, rows: Sequence[str]) -> dict[str, float | None]:
    """What the comparison chart draws for one run."""
    return {row: row_value(record, row) for row in rows}


def deltas(runs: Sequence[RunRecord], baseline: int = 0) -> list[dict[str, Delta]]:
    """For each run, {row: Delta against runs[baseline]}."""
    base = runs[baseline]
    rows = (*rows_for(runs), "steady_sample")
    return [{row: Delta(row_value(r, row), row_value(base, row)) for row in rows} for r in runs]


def memory_rows(runs: Sequence[RunRecord]) -> list[tuple[str, list[int | None]]]:
    """(label, bytes per run) of the memory rows of a comparison: the process tree's peak
    RSS, then per GPU that any run used the tree's peak (NVML) and TensorFlow's allocator
    peak where the probe reported one."""
    rows: list[tuple[str, list[int | None]]] = [("Peak memory", [r.peak_rss for r in runs])]
    used = [r.gpu_peaks for r in runs]
    allocator = [r.allocator_peaks for r in runs]
    for gpu in sorted({g for peaks in used for g in peaks} | {g for peaks in allocator for g in peaks}):
        if any(gpu in peaks for peaks in used):
            rows.append((f"GPU {gpu} memory peak", [peaks.get(gpu) for peaks in used]))
        if any(gpu in peaks for peaks in allocator):
            rows.append((f"GPU {gpu} TensorFlow allocator peak", [peaks.get(gpu) for peaks in allocator]))
    return rows + read_rows(runs)


READ_ROW_FROM = 1 << 20  # a phase whose reads are all under this in every run is no row


def read_rows(runs: Sequence[RunRecord]) -> list[tuple[str, list[int | None]]]:
    """(label, bytes per run) read from storage in each phase where a run read enough to
    tell a cold start from a warm one (page_cache=cold against warm: import and load)."""
    rows: list[tuple[str, list[int | None]]] = []
    for name in phase_rows(runs):
        values = [p.read_bytes if (p := r.phase(name)) is not None else None for r in runs]
        if any(v is not None and v >= READ_ROW_FROM for v in values):
            rows.append((f"{label(name)}: read from storage", values))
    return rows


def differing_settings(configs: Sequence[LaunchConfig]) -> list[str]:
    """Names of the settings that are not the same in every config, in declaration order."""
    return [f.name for f in fields(LaunchConfig)
            if len({repr(getattr(c, f.name)) for c in configs}) > 1]


@dataclass(frozen=True)
class SettingRow:
    """One setting across the compared runs, in words (setting_text), and whether it differs."""

    name: str
    label: str
    help: str
    values: tuple[str, ...]
    differs: bool


def setting_rows(configs: Sequence[LaunchConfig]) -> list[SettingRow]:
    """Every setting the runs' subjects read, in declaration order, as a table shows it: no
    model row among programs (a program's config keeps the form's hidden model), no
    program row among models."""
    own = [own_config(c) for c in configs]
    subjects = {c.subject_type for c in configs}
    unread = set(unread_by(subjects.pop())) if len(subjects) == 1 else set()
    differing = set(differing_settings(own))
    return [SettingRow(f.name, BY_NAME[f.name].label, BY_NAME[f.name].help,
                       tuple(setting_text(f.name, getattr(c, f.name)) for c in own), f.name in differing)
            for f in fields(LaunchConfig) if f.name not in unread]


def run_ident(record: RunRecord, index: int) -> str:
    """#id of a stored run, or its place in the comparison."""
    return f"#{record.history_id}" if record.history_id is not None else f"run {index + 1}"


def run_labels(runs: Sequence[RunRecord], idents: Sequence[str] | None = None,
               leave_out: Collection[str] = ()) -> list[str]:
    """A short name per run: its id (or `idents`), its subject where the runs' subjects
    differ (a model by its file, a program by its command line), and the settings that
    tell it from the others among the runs that read them (`#3 intra=1 onednn=off`), less
    those in `leave_out`; a path names its last part, the whole is in config.summary()."""
    differing = [name for name in (own_settings_differ(runs) if len(runs) > 1 else []) if name not in leave_out]
    configs = [own_config(r.config) for r in runs]
    shown = {name: short_values(configs, name) for name in differing}
    subjects = [subject_words(r) for r in runs]
    if len(set(subjects)) > 1:
        # A model by the end of its path that tells it apart; a command line whole, if short.
        models = [i for i, r in enumerate(runs) if r.subject_type is Subject.MODEL]
        tails = dict(zip(models, _tails([subjects[i] for i in models]), strict=True)) if models else {}
        subjects = [tails.get(i) or _shorten(subjects[i], 20) for i in range(len(runs))]
    else:
        subjects = ["" for _ in runs]
    names = idents if idents is not None else [run_ident(record, i) for i, record in enumerate(runs)]
    # The kind of run where the runs differ in it (a warm and a cold launch of one script have
    # the same settings, and seconds between them; an anatomy run is slowed by its profiler).
    kinds = [r.kind for r in runs]
    started = [f"({k.short})" if not k.plain and len(set(kinds)) > 1 else "" for k in kinds]
    return [" ".join([names[i], *([subjects[i]] if subjects[i] else []),
                      *(f"{name}={shown[name][i]}" for name in differing if reads(configs[i], name)),
                      *([started[i]] if started[i] else [])])
            for i in range(len(runs))]


def short_values(configs: Sequence[LaunchConfig], name: str) -> list[str]:
    """A setting's value in each config, short: a path as the end that tells it apart."""
    if name in ("model", "python"):
        return _tails([getattr(c, name) for c in configs])
    return [short_value(getattr(c, name), name) for c in configs]


def _tails(paths: list[str]) -> list[str]:
    """The shortest ends of the paths that still tell them apart (…/venv2/bin/python)."""
    split = [p.rstrip("/").split("/") for p in paths]
    for keep in range(1, max(len(parts) for parts in split) + 1):
        tails = ["/".join(parts[-keep:]) for parts in split]
        if len(set(tails)) == len(set(paths)):
            # Each folder shortened on its own: shortening the whole tail cut out the part
            # that told the paths apart (…/tensorflow-2…2/bin/python for every one).
            return [("…/" if len(parts) > keep else "") + "/".join(_shorten(part) for part in tail.split("/"))
                    for parts, tail in zip(split, tails, strict=True)]
    return list(paths)


def _shorten(name: str, keep: int = 12) -> str:
    """A long name as its start and end (resnet50_fin…_epoch_120): labels stay on one line."""
    return name if len(name) <= 2 * keep + 4 else f"{name[:keep]}…{name[-keep:]}"
