"""The import X-ray in words: where an import's time went, and the known causes it shows.

The probe sends facts (tflaunch_probe.import_xray, checked by events.checked_imports); the
advice is decided here, so the CLI, the app and review images say the same thing.
"""

from __future__ import annotations

from typing import Any

from ..grid import grid
from ..units import MIB, format_bytes, format_duration

ROWS = 15  # modules shown by cumulative and by self time
# A package whose sampled modules were compiled at import more often than this has lost its
# .pyc files (a few new or edited modules are normal).
UNCOMPILED_SHARE = 0.2
# Read from storage during the import beyond this: the libraries were not in the page cache
# (TensorFlow's shared libraries alone are over 500 MiB; a warm import reads next to none).
COLD_READ_BYTES = 50 * MIB
_LABELS = {"tensorflow": "TensorFlow", "keras": "Keras", "tf_keras": "tf_keras (Keras 2)"}


def top_by_cumulative(imports: dict[str, Any], rows: int = ROWS) -> list[dict[str, Any]]:
    """Module groups by time from entering to leaving them (imports they made included)."""
    return sorted(imports.get("groups") or [], key=lambda g: -g["cumulative"])[:rows]


def top_by_self(imports: dict[str, Any], rows: int = ROWS) -> list[dict[str, Any]]:
    """Module groups by time in their own code, imports they made excluded."""
    return sorted(imports.get("groups") or [], key=lambda g: -g["self"])[:rows]


def import_flags(imports: dict[str, Any], python: str = "python") -> list[str]:
    """One sentence per known cause of a slow import the X-ray shows, each saying what to do."""
    if not imports:
        return []
    flags = [_uncompiled(name, facts, python) for name, facts in (imports.get("compiled") or {}).items()]
    keras = imports.get("keras") or {}
    if str(keras.get("keras") or "").startswith("3") and keras.get("tf_keras"):
        flags.append(f"Keras 2 (tf_keras {keras['tf_keras']}) and Keras 3 (keras {keras['keras']}) were both "
                     "imported, so the import paid for both: use one (unset TF_USE_LEGACY_KERAS and stop "
                     "importing tf_keras, or import only tf_keras).")
    read = imports.get("read_bytes")
    if isinstance(read, int) and read > COLD_READ_BYTES:
        flags.append(f"{format_bytes(read)} were read from disk during the import: the libraries were not in the "
                     "page cache (the first run after boot or after the files changed); later runs will be faster.")
    return [f for f in flags if f]


def import_notes(imports: dict[str, Any]) -> list[str]:
    """What the import did that costs no time but is worth knowing (not a warning)."""
    # Measured with tensorflow-cpu 2.21: the notice path costs nothing at import (unset,
    # =1 and =0 within 0.1 s of each other, alternated), and =1 logs the notice too.
    if imports and imports.get("onednn") is None \
            and any(p.get("name") == "tensorflow" for p in imports.get("packages") or []):
        return ["TF_ENABLE_ONEDNN_OPTS is not set, so oneDNN's custom CPU operations are on and TensorFlow logs "
                "a notice about them: set oneDNN off (TF_ENABLE_ONEDNN_OPTS=0) for reproducible numerics and "
                "no notice; setting it on (=1) changes nothing but the record of the choice."]
    return []


def _uncompiled(package: str, facts: dict[str, Any], python: str) -> str:
    checked = facts.get("checked") or 0
    written, uncached = facts.get("written") or 0, facts.get("uncached") or 0
    if not checked or (written + uncached) / checked <= UNCOMPILED_SHARE:
        return ""
    label, share = _LABELS.get(package, package), round(100 * (written + uncached) / checked)
    if uncached >= written:
        folder = facts.get("folder") or f"the {package} folder in site-packages"
        modules = facts.get("modules") or 0
        return (f"{label}'s .pyc files are missing ({share} % of {checked} of its {modules:,} modules "
                f"checked were compiled at import, which makes the import about 3x slower on every run): run "
                f"`{python} -m compileall -q {folder}` once, or make that folder writable.")
    return (f"{label}'s .pyc files were missing and this run compiled and saved them ({share} % of {checked} "
            "modules checked), which made its import about 3x slower; later runs will be faster.")


def import_line(imports: dict[str, Any], packages: int = 3) -> str:
    """"Import 2.15 s: tensorflow 1.70 s, keras 300 ms, numpy 48 ms; native libraries 18 %"
    (the top packages by their own time, which add up to the total)."""
    if not imports:
        return ""
    top = [f"{p['name']} {format_duration(p['self'])}" for p in (imports.get("packages") or [])[:packages]]
    share = f"native libraries {imports.get('native_share', 0.0) * 100:.0f} %"
    return f"Import {format_duration(imports.get('total'))}: " + ", ".join([*top, share])


def import_table(imports: dict[str, Any], python: str = "python", rows: int = ROWS) -> str:
    """The X-ray for a terminal: the line, the top groups by cumulative time, the flags."""
    if not imports:
        return "Import X-ray: not recorded (the run ended before its import finished, or an older tflaunch ran it)."
    total = imports.get("total") or 0.0
    table = grid(["Module (cumulative)", "Cumulative", "Self", "Share", "Modules"], [
        [g["name"], format_duration(g["cumulative"]), format_duration(g["self"]),
         f"{100 * g['cumulative'] / total:.0f} %" if total else "–", str(g["modules"])]
        for g in top_by_cumulative(imports, rows)])
    by_self = ", ".join(f"{g['name']} {format_duration(g['self'])}" for g in top_by_self(imports, 5))
    lines = [f"{import_line(imports)} ({imports.get('modules', 0):,} modules imported)", "", table, "",
             f"Most time in their own code: {by_self}"]
    return "\n".join([*lines, *(f"warning: {flag}" for flag in import_flags(imports, python)),
                      *(f"note: {note}" for note in import_notes(imports))])
