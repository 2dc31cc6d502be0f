"""The same model in SavedModel, .keras and .h5, for sweeps that treat format as a setting.

Conversions run in the chosen interpreter (through the probe's --convert mode) and are
kept in the cache folder under a key of the source's path, size and modification time,
so a changed model is converted again and an unchanged one never twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from .config import PROBE_PATH
from .probe import model_format
from .paths import data_dir

FORMATS = ("savedmodel", "keras", "h5")


class ConversionError(Exception):
    """A model could not be saved in another format; the message says why."""


def cache_dir() -> Path:
    return data_dir() / "formats"


def _key(model: str) -> str:
    if model.startswith("sample:"):
        return model.replace(":", "-")
    path = Path(model).expanduser().resolve()
    stat = path.stat()
    digest = hashlib.sha1(f"{path}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return f"{path.stem}-{digest}"


def _expected(model: str, folder: Path, fmt: str) -> Path:
    stem = model[len("sample:"):] if model.startswith("sample:") else Path(model).stem
    return folder / (f"{stem}_savedmodel" if fmt == "savedmodel" else f"{stem}.{fmt}")


def conversion_command(python: str, model: str, formats: list[str], out: Path) -> list[str]:
    command = [python, str(PROBE_PATH)]
    command += ["--save-sample", model[len("sample:"):]] if model.startswith("sample:") else ["--convert", model]
    for fmt in formats:
        command += ["--format", fmt]
    return command + ["--out", str(out)]


def in_formats(model: str, formats: list[str], python: str) -> dict[str, str]:
    """{format: path} of the model in each format, converting (once) where needed."""
    source_format = None if model.startswith("sample:") else model_format(os.path.abspath(os.path.expanduser(model)))
    result = {fmt: model for fmt in formats if fmt == source_format}
    missing = [fmt for fmt in formats if fmt not in result]
    if not missing:
        return result
    folder = cache_dir() / _key(model)
    todo = [fmt for fmt in missing if not _expected(model, folder, fmt).exists()]
    if todo:
        done = subprocess.run(conversion_command(python, model, todo, folder), capture_output=True, text=True)
        for line in done.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "error":
                raise ConversionError(f"{model} could not be converted: {event.get('message')}")
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ConversionError(f"Converting {model} failed (exit code {done.returncode}): {tail}")
    for fmt in missing:
        path = _expected(model, folder, fmt)
        if not path.exists():
            raise ConversionError(f"Converting {model} to {fmt} produced no file at {path}.")
        result[fmt] = str(path)
    return result
