"""The probe's conversion mode, invoked from this one place: a model (or a built-in
sample) saved as SavedModel, .keras and .h5, for `tflaunch sample`, for sweeps that
treat format as a setting, and for the tests' model builders.

Conversions run in the chosen interpreter and, for sweeps, are kept in the cache folder
under a key of the source's path, size and modification time, so a changed model is
converted again and an unchanged one never twice.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from ..paths import data_dir
from ..probe.model.convert import saved_path
from ..probe.model.model_files import model_format
from ..settings.child import convert_command
from .events import EventParser, ProbeError, Saved

FORMATS = ("savedmodel", "keras", "h5")
CONVERT_TIMEOUT_S = 1800.0


class ConversionError(Exception):
    """A model could not be saved in another format; the message says why."""


def convert(python: str, source: str, formats: list[str], out: Path) -> dict[str, Path]:
    """Save `source` in each format under `out` with `python`; {format: path}."""
    try:
        done = subprocess.run(convert_command(python, source, formats, out), capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=CONVERT_TIMEOUT_S)
    except OSError as exc:
        raise ConversionError(f"Could not start {python}: {exc.strerror or exc}.") from None
    except subprocess.TimeoutExpired:
        raise ConversionError(f"Converting {source} took longer than {CONVERT_TIMEOUT_S:.0f} s.") from None
    parser, saved = EventParser(), {}
    for line in done.stdout.splitlines():
        event = parser.parse(line)
        if isinstance(event, ProbeError):
            raise ConversionError(f"{source} could not be converted: {event.message}")
        if isinstance(event, Saved):
            saved[event.format] = Path(event.path)
    missing = [fmt for fmt in formats if fmt not in saved]
    if missing:
        tail = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise ConversionError(f"Converting {source} to {', '.join(missing)} failed "
                              f"(exit code {done.returncode}): {tail}")
    return saved


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
