"""The probe's conversion mode: save a sample, or a Keras model, in other formats.

The launcher's one caller is tflaunch.core.run.formats (sweeps over format, `tflaunch
sample`, the tests' model builders).
"""

from __future__ import annotations

import os
from typing import Any

from ..channel import Channel
from ..failure import ProbeFailure
from ..tf_setup import import_tensorflow
from .model_files import load_model

FORMATS = ("savedmodel", "keras", "h5")  # what a model can be saved as, each a sweep's setting


def saved_path(out: str, stem: str, fmt: str) -> str:
    return os.path.join(out, f"{stem}_savedmodel" if fmt == "savedmodel" else f"{stem}.{fmt}")


def save_formats(channel: Channel, model: Any, stem: str, formats: list[str], out: str) -> None:
    if not hasattr(model, "save"):
        raise ProbeFailure("cannot_convert", "A SavedModel cannot be turned back into a Keras model; "
                           "convert from the .keras or .h5 file it was exported from.")
    os.makedirs(out, exist_ok=True)
    for fmt in formats:
        path = saved_path(out, stem, fmt)
        if fmt == "savedmodel":
            model.export(path, verbose=False)
        else:
            model.save(path)
        channel.emit("saved", "load", path=path, format=fmt)


def convert(channel: Channel, source: str, formats: list[str], out: str) -> None:
    """Save `source` (a model path or sample:NAME) in each of `formats` under `out`."""
    tf, keras = import_tensorflow()
    stem = source[len("sample:"):] if source.startswith("sample:") else \
        os.path.splitext(os.path.basename(source.rstrip("/")))[0]
    save_formats(channel, load_model(tf, keras, source), stem, formats, out)
