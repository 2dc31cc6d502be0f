"""Models are code where they can be: what a model named by a shared profile could run.

A SavedModel's graph runs when it is loaded and called, and TensorFlow has operations that
read and write files (ReadFile, WriteFile, ...) or call Python (PyFunc, EagerPyFunc): a
stranger's SavedModel can read a system file and write a marker without a line of Python.
A .keras file is a zip whose config.json can name a Lambda layer (Python bytecode stored
in the file) or classes from modules other than Keras (code the load imports). Such a
model needs its user's yes like any other code (trust.py). What it holds is read without
running it: config.json as JSON, saved_model.pb with TensorFlow's protobuf classes in a
child process (the GUI process never imports TensorFlow), both with size caps.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from ..probe.model.model_files import model_format
from ..probe.outside_files import check_regular, file_sha256, resolved
from ..safe_text import shown

# Operations that call Python or touch files (names as in TensorFlow's op registry).
CODE_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
FILE_OPS = frozenset({
    "ReadFile", "WriteFile", "MatchingFiles", "ImmutableConst", "PrintV2", "DecodeProtoV2",
    "InitializeTableFromTextFile", "InitializeTableFromTextFileV2", "LoadAndRemapMatrix",
    "TFRecordDataset", "TFRecordDatasetV2", "TextLineDataset", "FixedLengthRecordDataset",
    "FixedLengthRecordDatasetV2", "WholeFileReader", "WholeFileReaderV2", "TextLineReader", "TextLineReaderV2",
    "TFRecordReader", "TFRecordReaderV2", "FixedLengthRecordReader", "FixedLengthRecordReaderV2",
    "SnapshotDataset", "SnapshotDatasetV2", "SaveDataset", "SaveDatasetV2", "LoadDataset", "DatasetToTFRecord",
    "CreateSummaryFileWriter", "Save", "SaveSlices", "Restore", "RestoreSlice",
})
# Every SavedModel holds these for its variables: they name files too, but only the model's own.
CHECKPOINT_OPS = frozenset({"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename", "StringJoin"})
KERAS_CONFIG_MOST = 64 << 20  # bytes of a .keras config.json: a model's config is kilobytes
_GRAPH_OPS = Path(__file__).resolve().parents[1] / "probe" / "model" / "graph_ops.py"


def model_code(model: str) -> str | None:
    """The line for trust's list when this model can run code, else None (samples, .h5,
    a .keras file of Keras's own layers). Cheap: listings call it for every profile."""
    if not model or model.startswith("sample:"):
        return None
    path = resolved(model)
    fmt = model_format(path)
    if fmt == "savedmodel":
        return (f"loads the SavedModel {shown(model)}: its graph runs as code and can read and write files "
                "(the operations it holds are listed when you are asked)")
    if fmt == "keras":
        found = keras_code(path)
        if found:
            return f"loads {shown(model)}, which holds {', '.join(shown(f, 120) for f in found[:8])}" + \
                (f" and {len(found) - 8} more" if len(found) > 8 else "")
    return None


def model_fingerprint(model: str) -> str | None:
    """What an acceptance of a model that is code covers besides the profile file: the
    SHA-256 of a SavedModel's graph (saved_model.pb: its variables are data, its graph is the
    code) or of a .keras file's config.json (where a Lambda's code is kept). None for a model
    that needs no yes. A model that cannot be read gives a value no acceptance matches."""
    if model_code(model) is None:
        return None
    path = resolved(model)
    try:
        if model_format(path) == "savedmodel":
            return "graph:" + file_sha256(os.path.join(path, "saved_model.pb"), 2 << 30, "The SavedModel graph")
        check_regular(path, "The model")
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("config.json")
            if info.file_size > KERAS_CONFIG_MOST:
                return "unreadable"
            return "config:" + hashlib.sha256(archive.read(info)).hexdigest()
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return "unreadable"


def keras_code(path: str) -> list[str]:
    """What a .keras file's config names that runs code; a file that cannot be read says so
    (it is refused at load anyway, but it is not vouched for)."""
    try:
        check_regular(path, "The model")
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("config.json")
            if info.file_size > KERAS_CONFIG_MOST:
                return [f"a config.json of {info.file_size} bytes, too large to check"]
            config = json.loads(archive.read(info))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, RecursionError) as exc:
        return [f"a file that cannot be checked ({type(exc).__name__})"]
    found: list[str] = []
    _walk(config, found, 0)
    return sorted(set(found))


def _walk(value: Any, found: list[str], depth: int) -> None:
    if depth > 200:
        found.append("a config nested too deep to check")
        return
    if isinstance(value, list):
        for item in value:
            _walk(item, found, depth + 1)
        return
    if not isinstance(value, dict):
        return
    name, module, registered = value.get("class_name"), value.get("module"), value.get("registered_name")
    if name in ("Lambda", "__lambda__"):
        found.append("a Lambda (Python code stored in the file)")
    elif isinstance(name, str) and isinstance(module, str) and not module.startswith(("keras", "builtins")):
        found.append(f"the class {module}.{name} (its module's code is imported)")
    elif isinstance(name, str) and isinstance(registered, str) and ">" in registered:
        found.append(f"the custom class {registered} (code registered outside Keras)")
    for item in value.values():
        _walk(item, found, depth + 1)


def model_details(model: str, timeout: float = 60.0) -> list[str]:
    """What the user is shown about a SavedModel before a yes: the operations of its graph
    that call Python or touch files, read in a child process. Empty for other models."""
    if not model or model.startswith("sample:") or model_format(resolved(model)) != "savedmodel":
        return []
    folder = resolved(model)
    try:
        done = subprocess.run([sys.executable, "-I", str(_GRAPH_OPS), folder], capture_output=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        answer = json.loads(done.stdout[:1 << 20] or b"{}")
    except subprocess.TimeoutExpired:
        return [f"its graph could not be read within {timeout:g} s: treat it as able to do anything"]
    except (OSError, ValueError) as exc:
        return [f"its graph could not be read ({shown(exc, 200)}): treat it as able to do anything"]
    if not isinstance(answer, dict) or not isinstance(answer.get("ops"), dict):
        why = answer.get("error") if isinstance(answer, dict) else None
        return [f"its graph could not be read ({shown(why or 'no answer', 300)}): treat it as able to do anything"]
    ops: dict[str, int] = {str(k): int(v) for k, v in answer["ops"].items() if isinstance(v, int)}
    lines = []
    for names, what in ((CODE_OPS, "calls Python"), (FILE_OPS, "reads or writes files")):
        held = sorted(op for op in ops if op in names)
        if held:
            lines.append(f"its graph {what}: " + ", ".join(f"{shown(op, 60)} ×{ops[op]}" for op in held))
    unknown = sorted(op for op in ops if not op.isidentifier())
    if unknown:
        lines.append("its graph names operations that are not TensorFlow's: " + shown(", ".join(unknown), 200))
    checkpoint = sorted(op for op in ops if op in CHECKPOINT_OPS)
    if not lines:
        lines.append(f"its graph holds {len(ops)} kinds of operation, none that calls Python or touches files "
                     "besides its own variables")
    if checkpoint:
        lines.append("like every SavedModel, it also holds the checkpoint operations that read its variables ("
                     + ", ".join(checkpoint) + ")")
    return lines
