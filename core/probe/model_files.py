"""Model files on disk: which format a path is, whether it looks intact, and loading it.

The launcher imports this module too, so users hear about a bad path before any launch;
the probe checks again, for runs started without the launcher's check.
"""

from __future__ import annotations

import os
from typing import Any

from .failure import ProbeFailure

FORMATS = ("keras", "h5", "savedmodel")
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def model_format(path: str) -> str | None:
    if os.path.isdir(path):
        return "savedmodel"
    ext = os.path.splitext(path)[1].lower()
    return {".keras": "keras", ".h5": "h5", ".hdf5": "h5"}.get(ext)


def check_model_path(spec: str) -> tuple[str, str]:
    """(absolute path, format) of a model file or folder; ProbeFailure saying what is wrong."""
    path = os.path.abspath(os.path.expanduser(spec))
    if not os.path.exists(path):
        raise ProbeFailure("model_not_found", f"The model {spec} does not exist. Check the path.")
    fmt = model_format(path)
    if fmt == "savedmodel":
        if not any(os.path.exists(os.path.join(path, f)) for f in ("saved_model.pb", "saved_model.pbtxt")):
            raise ProbeFailure(
                "not_saved_model",
                f"{spec} is a folder but not a SavedModel: it has no saved_model.pb. "
                "Export one with model.export(path) or tf.saved_model.save().")
    elif fmt is None:
        raise ProbeFailure(
            "unsupported_format",
            f"{spec} is not a model tflaunch can load. Use a SavedModel folder, "
            "a .keras file or an .h5 file.")
    check_file_signature(spec, path, fmt)
    return path, fmt


def check_file_signature(spec: str, path: str, fmt: str) -> None:
    """Catch truncated or mislabelled files before TensorFlow gives a cryptic error.

    Only headers are read (a zip's directory sits at its end, so truncation shows): a CRC
    pass over the whole archive would add a visible share to the load it measures.
    """
    if fmt == "keras":
        import zipfile

        ok = zipfile.is_zipfile(path)
        if ok:
            with zipfile.ZipFile(path) as archive:
                ok = "config.json" in archive.namelist()
        what = "a .keras archive"
    elif fmt == "h5":
        with open(path, "rb") as f:
            ok = f.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE
        what = "an HDF5 file"
    else:
        return
    if not ok:
        raise ProbeFailure(
            "corrupt_model",
            f"{spec} is not a valid {fmt} model: it is not {what} (truncated or corrupt). "
            "Save the model again.")


def load_model(tf: Any, keras: Any, spec: str) -> Any:
    """The model a spec names: a sample built from code, or a file in one of FORMATS."""
    if spec.startswith("sample:"):
        from .samples import build_sample

        return build_sample(keras, spec[len("sample:"):])
    path, fmt = check_model_path(spec)
    try:
        if fmt == "savedmodel":
            return tf.saved_model.load(path)
        return keras.models.load_model(path, compile=False)
    except Exception as exc:
        raise ProbeFailure(
            "model_load_failed", f"Could not load {spec} as {fmt}: {type(exc).__name__}: {exc}"
        ) from exc
