"""TensorFlow Serving's warm-up file: where it lives, whose it is, writing it, reading it.

TF Serving reads `<SavedModel>/assets.extra/tf_serving_warmup_requests` when it loads a
model: a TFRecord file of PredictionLog records, at most 1000 of them, each replayed
before the model takes traffic. The launcher imports this module too (no TensorFlow at
import), so a model that cannot carry the file, or a file already there, is refused
before any child starts; the probe checks again, for the time between.
"""

from __future__ import annotations

import os
import re
from typing import Any, List, Optional, Tuple

from ..failure import ProbeFailure, first_line
from ..model.model_files import check_model_path, model_format
from ..outside_files import check_regular

FOLDER = "assets.extra"
NAME = "tf_serving_warmup_requests"
MAX_RECORDS = 1000  # TF Serving refuses to load a model whose file holds more
MAX_BYTES = 2 << 30  # what such a file can reasonably take; a larger one is not read
RECORD_FRAMING = 16  # a TFRecord's length (8 bytes), its checksum (4), and the data's checksum (4)
EXPORT_ADVICE = ("Export one (in Keras: model.export('FOLDER'); or tf.saved_model.save), or give --export-to "
                 "FOLDER and tflaunch exports it there first and writes the file into that SavedModel.")


def warmup_path(model_dir: str) -> str:
    return os.path.join(model_dir, FOLDER, NAME)


def serving_name(model_dir: str) -> str:
    """The name TF Serving would serve the model under: its folder's, or, for a version
    folder (/models/NAME/1, the layout TF Serving reads), the folder above it."""
    path = os.path.abspath(model_dir).rstrip(os.sep)
    name = os.path.basename(path)
    if name.isdigit():
        return os.path.basename(os.path.dirname(path)) or name
    return name


def saved_model_dir(spec: str) -> str:
    """The SavedModel folder a model spec names; ProbeFailure for any other kind of model."""
    if spec.startswith("sample:"):
        raise ProbeFailure("not_saved_model", f"{spec} is a built-in sample, not a SavedModel on disk, so it cannot "
                           f"carry a warm-up file. Save it with `tflaunch sample {spec[7:]} --format savedmodel "
                           "--out FOLDER`, or give --export-to FOLDER.")
    fmt = model_format(os.path.abspath(os.path.expanduser(spec)))
    if fmt in ("keras", "h5", "code"):
        what = {"keras": "a .keras file", "h5": "an .h5 file", "code": "a model built by code"}[fmt]
        raise ProbeFailure("not_saved_model", f"{spec} is {what}; only a SavedModel folder can carry a TensorFlow "
                           f"Serving warm-up file ({FOLDER}/{NAME}), since TF Serving loads SavedModels. "
                           + EXPORT_ADVICE)
    path, _ = check_model_path(spec)
    return path


def check_target(spec: str, force: bool) -> str:
    """The warm-up file to write for a model; ProbeFailure when it may not be written."""
    target = warmup_path(saved_model_dir(spec))
    if os.path.lexists(target) and not force:
        raise ProbeFailure("warmup_exists", f"{target} exists already. tflaunch never replaces a warm-up file "
                           "unasked: check it with `tflaunch serving-warmup --check --model "
                           f"{spec}`, or give --force to write a new one in its place.")
    folder = os.path.dirname(target)
    if not os.access(folder if os.path.isdir(folder) else os.path.dirname(folder), os.W_OK):
        raise ProbeFailure("warmup_not_writable", f"Cannot write {target}: {folder} is not writable by you. "
                           "Copy the SavedModel somewhere you can write, or export it with --export-to FOLDER.")
    return target


def write_temporary(tf: Any, target: str, records: List[bytes]) -> str:
    """The records written beside `target` under a temporary name, which is returned: the
    file is read back and replayed there, and only then put in place."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    temporary = f"{target}.tflaunch-{os.getpid()}.tmp"
    try:
        with tf.io.TFRecordWriter(temporary) as writer:
            for record in records:
                writer.write(record)
    except (OSError, tf.errors.OpError) as exc:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise ProbeFailure("warmup_not_writable", f"Cannot write {target}: {first_line(exc)}. Check the folder's "
                           "permissions and free space.") from None
    return temporary


def put_in_place(temporary: str, target: str, force: bool) -> None:
    """In one step, so TF Serving (or any reader) sees the old file or the whole new one,
    never half. Without `force` an existing file, one that appeared since the check too, is kept."""
    try:
        if force:
            os.replace(temporary, target)
        else:
            os.link(temporary, target)  # fails with FileExistsError where os.replace would replace
    except FileExistsError:
        raise ProbeFailure("warmup_exists", f"{target} appeared while tflaunch was writing; it was kept. Give "
                           "--force to replace it.") from None
    except OSError as exc:
        raise ProbeFailure("warmup_not_writable", f"Cannot write {target}: {exc.strerror or exc}. Check the "
                           "folder's permissions and free space.") from None


def read_records(tf: Any, path: str) -> Tuple[List[bytes], Optional[str]]:
    """The file's records, and why reading stopped early (None when it read to its end).

    A TFRecord carries a checksum of each length and payload, so a cut or overwritten
    file shows as an error at the first damaged record, whose number the message gives."""
    if not os.path.lexists(path):
        raise ProbeFailure("warmup_not_found", f"There is no warm-up file at {path}. Write one with "
                           "`tflaunch serving-warmup --model MODEL`.")
    try:  # a FIFO would stall the reader and /dev/zero would never end: a regular file, capped
        size = check_regular(path, "The warm-up file").st_size
    except OSError as exc:
        raise ProbeFailure("warmup_unreadable", str(exc)) from None
    if size > MAX_BYTES:
        raise ProbeFailure("warmup_unreadable", f"The warm-up file {path} is {size} bytes; a warm-up file of "
                           f"{MAX_RECORDS} requests is far smaller (at most {MAX_BYTES} bytes are read).")
    records: List[bytes] = []
    advice = "the file is truncated or is not a TFRecord file. Write it again with `tflaunch serving-warmup " \
             "--force --model MODEL`."
    try:
        for record in tf.data.TFRecordDataset(path):
            records.append(bytes(record.numpy()))
            if len(records) > MAX_RECORDS:
                return records, (f"it holds more than {MAX_RECORDS} records, and TF Serving refuses to load a model "
                                 f"whose warm-up file holds more. Keep at most {MAX_RECORDS}.")
    except tf.errors.OpError as exc:
        return records, f"record {len(records) + 1} cannot be read ({_cause(exc)}): {advice}"
    # A tail shorter than a record's 12-byte header reads as the end of the file: count it.
    left = os.path.getsize(path) - sum(len(r) + RECORD_FRAMING for r in records)
    if left:
        return records, f"record {len(records) + 1} cannot be read (the file ends {left} bytes into it): {advice}"
    return records, None


def _cause(exc: BaseException) -> str:
    """TFRecord's own words ("truncated record at 19272"), without the iterator's op context."""
    found = re.search(r"(truncated record at \d+|corrupted record at \d+|[Dd]ata ?loss[^.\[]*)", str(exc))
    return found.group(1) if found else first_line(exc)
