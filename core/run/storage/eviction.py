"""What the page_cache setting does before time zero, and the report of what it did.

cold: the model's files, then the interpreter's TensorFlow and Keras installation, are
dropped from the page cache (posix_fadvise DONTNEED, file by file, no root), as after a
reboot; residency is measured before and after (mincore), so the run says how cold it
really was and why pages stayed. preloaded: the same, then the model's files are read
back in (vmtouch -t): TensorFlow starts cold, the model is in memory, as when a deploy
script preloads it. warm: nothing is touched.

Only the files named here are touched: the model's (a SavedModel folder walked, a .keras
or .h5 file, a builder's .py file) and the installation's. A program's own files (its
model, its data) are not known to tflaunch: its script file alone is evicted, and the
notes say so.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from ...probe.model.model_files import is_builder
from ...settings.config import LaunchConfig
from ...units import format_bytes, format_duration
from ..interpreters.tf_install import PACKAGES, files_under, installation
from . import page_cache
from .mounts import mount_of
from .page_holders import stay_reasons

# Less than this left in memory is noise (a page or two of a file being read right now).
KEPT_NOISE = 1 << 20
MODEL, INSTALLATION = "model", "TensorFlow"  # the groups of files, in the order they are evicted


@dataclass
class Level:
    """One group of files: the model's, or the installation's."""

    name: str  # MODEL or INSTALLATION
    files: int = 0
    size: int = 0
    before: int = 0  # bytes resident before eviction
    after: int = 0  # after eviction (and after preloading, for the model when preloaded)
    vanished: int = 0  # files gone between listing and eviction
    unreadable: list[str] = field(default_factory=list)  # "path: reason", the first few
    kept: dict[str, int] = field(default_factory=dict)  # path: bytes still resident, where above noise

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files, "bytes": self.size, "resident_before": self.before,
                "resident_after": self.after, "vanished": self.vanished, "unreadable": self.unreadable[:5]}


@dataclass
class PageCacheReport:
    state: str  # the setting: cold or preloaded
    levels: list[Level] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why pages stayed, what could not be evicted
    preloaded: int | None = None  # bytes of the model read back in
    preload_seconds: float | None = None  # how long that read took (before time zero: not in the figures)

    def level(self, name: str) -> Level | None:
        """The group of files called `name` (MODEL, INSTALLATION), if this report has it."""
        return next((level for level in self.levels if level.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """As the history and the JSON keep it (store/rows.py reads it back)."""
        return {"state": self.state, **{level.name.lower(): level.to_dict() for level in self.levels},
                "preloaded": self.preloaded, "preload_seconds": self.preload_seconds, "notes": list(self.notes)}

    def sentences(self) -> list[str]:
        """The launcher's notes on the run: what was evicted, of how much, and why some stayed."""
        parts = [f"{level.name} {format_bytes(level.before)} → {format_bytes(level.after)} in memory of "
                 f"{format_bytes(level.size)} ({level.files} files)" for level in self.levels if level.files]
        head = ("Page cache cold: evicted before the start: " if self.state == "cold" else
                "Page cache preloaded: evicted, then the model's files read back in: ")
        out = [head + "; ".join(parts) + "." if parts else head + "nothing to evict."]
        if self.preloaded and self.preload_seconds is not None:
            out.append(f"Reading the model back in took {format_duration(self.preload_seconds)} "
                       f"({format_bytes(self.preloaded)}) before time zero: not in this run's figures.")
        return out + self.notes


def model_files(config: LaunchConfig) -> tuple[list[str], str | None]:
    """The files of the run's subject that a cold start evicts, and a note on what it cannot."""
    if config.is_program:
        script = next((a for a in config.program[1:] if a.endswith(".py")), None)
        folder = os.path.expanduser(config.workdir) if config.workdir else os.getcwd()
        path = os.path.join(folder, os.path.expanduser(script)) if script else None
        note = ("A program's own files (its model, its data) are not known to tflaunch: only its script and "
                "TensorFlow's installation were evicted.")
        return ([path] if path and os.path.isfile(path) else []), note
    model = config.model
    if model.startswith("sample:"):
        return [], f"{model} is built from code: it has no files to evict (TensorFlow's installation still is)."
    path = os.path.expanduser(model.rpartition(":")[0] if is_builder(model) else model)
    if os.path.isdir(path):
        return sorted(files_under([path])), None
    return [path], None


def check(config: LaunchConfig) -> str | None:
    """Why this page_cache setting cannot be honoured here, said before anything starts."""
    if config.page_cache == "warm":
        return None
    if not page_cache.supported():
        return ("A cold page cache needs Linux (posix_fadvise and mincore); use page_cache=warm on this "
                "system.")
    return None


def prepare(config: LaunchConfig) -> PageCacheReport | None:
    """Evict (and for preloaded, read the model back) right before the child starts."""
    if config.page_cache == "warm" or check(config) is not None:
        return None
    report = PageCacheReport(config.page_cache)
    files, note = model_files(config)
    model = Level(MODEL)
    _evict(model, files, report)
    installed = installation(config.python)
    tf = Level(INSTALLATION)
    if isinstance(installed, str):
        report.notes.append(f"TensorFlow's installation was not evicted: {installed}")
    else:
        folders = [f for name in PACKAGES for f in installed.get(name, [])]
        if not folders:
            report.notes.append(f"{config.python} has no TensorFlow or Keras installed: there was no installation "
                                "to evict.")
        _evict(tf, files_under(folders), report)
    if config.page_cache == "preloaded":
        began = time.monotonic()
        report.preloaded = _preload(model, files)
        report.preload_seconds = time.monotonic() - began
    report.levels = [model, tf]
    if note:
        report.notes.insert(0, note)
    for level in report.levels:
        report.notes += stay_reasons(level.kept, level.name)
    return report


def _in_memory_note(level: Level, files: list[str]) -> str | None:
    mount = mount_of(files[0]) if files else None
    if mount is None or not mount.in_memory:
        return None
    return (f"The {level.name} files are on {mount.describe()}, a file system that lives in memory: they cannot be "
            "evicted, so this start reads them from memory as a warm one would. Move them to a disk for a "
            "cold start.")


def _evict(level: Level, files: list[str], report: PageCacheReport) -> None:
    note = _in_memory_note(level, files)
    if note:
        report.notes.append(note)
    for path in files:
        try:
            before = page_cache.residency(path)
            if note is None:
                page_cache.evict(path)
            after = page_cache.residency(path)
        except FileNotFoundError:
            level.vanished += 1
            continue
        except OSError as exc:
            level.unreadable.append(f"{path}: {exc.strerror or exc}")
            continue
        level.files += 1
        level.size += before.size
        level.before += before.resident
        level.after += after.resident
        if after.resident > KEPT_NOISE // 16 and note is None:
            level.kept[path] = after.resident
    if sum(level.kept.values()) < KEPT_NOISE:
        level.kept.clear()
    if level.vanished:
        report.notes.append(f"{level.vanished} of the {level.name} files disappeared while tflaunch evicted them "
                            "(changed or deleted by something else): the run is measured as it finds them.")
    if level.unreadable:
        report.notes.append(f"{len(level.unreadable)} of the {level.name} files could not be evicted "
                            f"(first: {level.unreadable[0]}).")


def _preload(level: Level, files: list[str]) -> int:
    done = 0
    level.after = 0
    for path in files:
        try:
            done += page_cache.preload(path)
            level.after += page_cache.residency(path).resident
        except OSError:
            continue
    return done
