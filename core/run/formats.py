"""The probe's conversion mode, invoked from this one place: a model (or a built-in
sample) saved as SavedModel, .keras and .h5, for `tflaunch sample`, for sweeps that
treat format as a setting, and for the tests' model builders.

The child is started, timed out, cancelled and read as every run's child is (one engine:
ProbeSession and the driver), its whole process group ended; it answers with a `saved`
event per file. Conversions run in the chosen interpreter and, for sweeps, are kept in
the cache folder under a key of the source's path, size and modification time, so a
changed model is converted again and an unchanged one never twice.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..paths import data_dir
from ..probe.model.convert import saved_path
from ..probe.model.model_files import model_format
from ..settings.child import convert_command
from ..settings.config import LaunchConfig
from .driver import run_sessions
from .events import Saved
from .record import RunRecord, RunStatus
from .session import ProbeSession
from .watcher import Output, Watcher

CONVERT_TIMEOUT_S = 1800.0


class ConversionError(Exception):
    """A model could not be saved in another format; the message says why."""


class _SavedFiles(Watcher):
    def __init__(self) -> None:
        self.paths: dict[str, Path] = {}

    def changed(self, record: RunRecord, output: Output | None) -> None:
        for event in output.events if output is not None else ():
            if isinstance(event, Saved):
                self.paths[event.format] = Path(event.path)


class Conversion:
    """One conversion child; `cancel` (from any thread) ends it and everything it started."""

    def __init__(self, python: str, source: str, formats: list[str], out: Path, timeout: float | None = None) -> None:
        self.source, self.formats = source, list(formats)
        self.timeout = CONVERT_TIMEOUT_S if timeout is None else timeout
        # The settings' defaults: the conversion's environment is ours, as a run's with none set.
        self.session = ProbeSession(LaunchConfig(python=python, timeout=self.timeout),
                                    child=convert_command(python, source, self.formats, out))
        self._cancel_asked = False

    def cancel(self) -> None:
        """Stop the conversion: the driver ends the child's group; `run` raises ConversionError."""
        self._cancel_asked = True
        self.session.cancel()

    def run(self) -> dict[str, Path]:
        """Save the source in each format; {format: path}. Ctrl+C ends the child's group,
        then reaches the caller as KeyboardInterrupt."""
        saved = _SavedFiles()
        record = run_sessions([self.session], saved)[0]
        source = self.source
        if record.status is RunStatus.CANCELLED:
            if self._cancel_asked:
                raise ConversionError(f"Converting {source} was cancelled.")
            raise KeyboardInterrupt
        if record.status is RunStatus.TIMED_OUT:
            raise ConversionError(f"Converting {source} took longer than {self.timeout:.0f} s.")
        if record.failure is not None and record.failure.kind == "spawn_failed":
            raise ConversionError(record.failure.message)
        if self.session.probe_error is not None:
            raise ConversionError(f"{source} could not be converted: {self.session.probe_error.message}")
        missing = [fmt for fmt in self.formats if fmt not in saved.paths]
        if missing:
            code = record.exit_code if record.exit_code is not None else -(record.exit_signal or 0)
            tail = next((line.strip() for line in reversed(record.stderr_tail) if line.strip()), "no output")
            raise ConversionError(f"Converting {source} to {', '.join(missing)} failed (exit code {code}): {tail}")
        return saved.paths


def convert(python: str, source: str, formats: list[str], out: Path) -> dict[str, Path]:
    """Save `source` in each format under `out` with `python`; {format: path}."""
    return Conversion(python, source, formats, out).run()


def cache_dir() -> Path:
    return data_dir() / "formats"


def _key(model: str) -> str:
    if model.startswith("sample:"):
        return model.replace(":", "-")
    path = Path(model).expanduser().resolve()
    stat = path.stat()
    digest = hashlib.sha1(f"{path}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return f"{path.stem}-{digest}"


def in_formats(model: str, formats: list[str], python: str) -> dict[str, str]:
    """{format: path} of the model in each format, converting (once) where needed."""
    source_format = None if model.startswith("sample:") else model_format(os.path.abspath(os.path.expanduser(model)))
    result = {fmt: model for fmt in formats if fmt == source_format}
    missing = [fmt for fmt in formats if fmt not in result]
    if not missing:
        return result
    folder = cache_dir() / _key(model)
    stem = model[len("sample:"):] if model.startswith("sample:") else Path(model).stem
    todo = [fmt for fmt in missing if not Path(saved_path(str(folder), stem, fmt)).exists()]
    if todo:
        convert(python, model, todo, folder)
    for fmt in missing:
        result[fmt] = saved_path(str(folder), stem, fmt)
    return result
