"""Model files on disk: which format a path is, whether it looks intact, and loading it.

The launcher imports this module too, so users hear about a bad path before any launch;
the probe checks again, for runs started without the launcher's check.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from ..failure import ProbeFailure, first_line
from ..outside_files import UnreadableFileError, check_regular

FORMATS = ("keras", "h5", "savedmodel")  # the formats a model can be saved in; "code" is built
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def is_builder(spec: str) -> bool:
    """FILE.py:FUNCTION, a model built by the user's code."""
    path, sep, function = spec.rpartition(":")
    return bool(sep) and path.endswith(".py") and function.isidentifier()


def model_format(path: str) -> str | None:
    if is_builder(path):
        return "code"
    if os.path.isdir(path):
        return "savedmodel"
    ext = os.path.splitext(path)[1].lower()
    return {".keras": "keras", ".h5": "h5", ".hdf5": "h5"}.get(ext)


def check_model_path(spec: str) -> tuple[str, str]:
    """(absolute path, format) of a model file or folder; ProbeFailure saying what is wrong."""
    if is_builder(spec):
        file = spec.rpartition(":")[0]
        if not os.path.isfile(os.path.expanduser(file)):
            raise ProbeFailure("model_not_found", f"The model builder {file} does not exist. Check the path.")
        return spec, "code"
    path = os.path.abspath(os.path.expanduser(spec))
    if not os.path.exists(path):
        raise ProbeFailure("model_not_found", f"The model {spec} does not exist. Check the path.")
    fmt = model_format(path)
    _check_regular_files(spec, path, fmt)
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
            "a .keras or .h5 file, or FILE.py:FUNCTION for a model built by your code.")
    check_file_signature(spec, path, fmt)
    return path, fmt


def _check_regular_files(spec: str, path: str, fmt: Optional[str]) -> None:
    """A model is regular files (a SavedModel: in folders): a FIFO would stall the reader for
    ever and /dev/zero would fill its memory, before any timeout of a run applies."""
    if fmt == "savedmodel":
        # A SavedModel is a handful of files; a folder of thousands is not one to walk here.
        for count, (root, _, names) in enumerate(os.walk(path)):
            if count > 1000:
                break
            for name in names:
                _check_one(spec, os.path.join(root, name))
    elif fmt in ("keras", "h5"):
        _check_one(spec, path)


def _check_one(spec: str, path: str) -> None:
    try:
        check_regular(path, "The model file")
    except UnreadableFileError as exc:
        where = "" if os.path.abspath(os.path.expanduser(spec)) == path else f" (in {spec})"
        raise ProbeFailure("unreadable_model", f"{exc}{where}") from None
    except OSError as exc:
        raise ProbeFailure("unreadable_model", f"The model file {path} cannot be read: {exc.strerror or exc}. "
                                               "Check the path and its permissions.") from None


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


def load_model(tf: Any, keras: Any, spec: str, unsafe: bool = False) -> Any:
    """The model a spec names: a sample or a builder function, or a file in one of FORMATS.

    `unsafe` turns Keras's safe mode off, which lets Lambda layers run code from the file.
    """
    if spec.startswith("sample:"):
        from .samples import build_sample

        return build_sample(keras, spec[len("sample:"):])
    path, fmt = check_model_path(spec)
    if fmt == "code":
        from .user_code import build_model

        return build_model(path)
    try:
        if fmt == "savedmodel":
            return tf.saved_model.load(path)
        if unsafe:
            try:
                return keras.models.load_model(path, compile=False, safe_mode=False)
            except TypeError:  # Keras 2 before 2.13 has no safe mode to turn off
                pass
        return keras.models.load_model(path, compile=False)
    except Exception as exc:
        raise ProbeFailure("model_load_failed", load_failure(spec, fmt, exc)) from exc


def load_failure(spec: str, fmt: str, exc: BaseException) -> str:
    """One sentence of cause and one of what to do, for the errors users meet most."""
    import re

    text = str(exc)
    where = f"Could not load {spec} as {fmt}"
    if "safe_mode" in text or ("Lambda" in text and "unsafe" in text):
        return (f"{where}: it has a Lambda layer, which runs Python code stored in the file, and Keras refuses "
                "that in safe mode. If you trust the file, allow it with --unsafe-deserialization.")
    missing = re.search(r"(?:Could not locate class|Unknown layer:?|Unknown object:?)\s*'?([\w.>]+)'?", text)
    unknown = missing is not None or "custom_objects" in text or "Could not deserialize" in text
    cause = first_line(exc).rstrip(".")
    if missing is not None:
        cause = f"it uses {missing.group(1)}, which is not a class Keras knows in this process"
    else:
        cause = f"{type(exc).__name__}: {cause}"
    message = f"{where}: {cause}."
    if unknown and fmt == "h5":
        return (f"{message} Legacy .h5 files often cannot be read back by Keras 3: save the model as .keras "
                "(model.save('model.keras')) or export a SavedModel (model.export(path)). If the model has "
                "custom layers, import the module that registers them with --import MODULE_OR_FILE.")
    if unknown:
        return (f"{message} If the model has custom layers, import the module that registers them with "
                "--import MODULE_OR_FILE (a module name or a .py file).")
    return message
