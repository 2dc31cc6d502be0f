"""The import X-ray in words: where an import's time went, and the known causes it shows.

The probe sends facts (tflaunch_probe.import_xray, checked by events.checked_imports); the
advice is decided here, so the CLI, the app and review images say the same thing.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from ..grid import grid
from ..phases import IMPORT
from ..run.status import PhaseState
from ..units import MIB, format_bytes, format_duration

if TYPE_CHECKING:
    from ..run.import_facts import CompiledPackage, ImportFacts, ModuleGroup
    from ..run.record import RunRecord

ROWS = 15  # modules shown by cumulative and by self time
# A package whose sampled modules were compiled at import more often than this has lost its
# .pyc files (a few new or edited modules are normal).
UNCOMPILED_SHARE = 0.2
# Read from storage during the import beyond this: the libraries were not in the page cache
# (TensorFlow's shared libraries alone are over 500 MiB; a warm import reads next to none).
COLD_READ_BYTES = 50 * MIB
_LABELS = {"tensorflow": "TensorFlow", "keras": "Keras", "tf_keras": "tf_keras (Keras 2)"}


def top_by_cumulative(imports: ImportFacts | None, rows: int = ROWS) -> list[ModuleGroup]:
    """Module groups by time from entering to leaving them (imports they made included)."""
    return sorted(imports.groups if imports else (), key=lambda g: -g.cumulative)[:rows]


def top_by_self(imports: ImportFacts | None, rows: int = ROWS) -> list[ModuleGroup]:
    """Module groups by time in their own code, imports they made excluded."""
    return sorted(imports.groups if imports else (), key=lambda g: -g.own)[:rows]


def import_flags(imports: ImportFacts | None, python: str = "python") -> list[str]:
    """One sentence per known cause of a slow import the X-ray shows, each saying what to do."""
    if not imports:
        return []
    flags = [_uncompiled(facts, python) for facts in imports.compiled]
    if (imports.keras or "").startswith("3") and imports.tf_keras:
        flags.append(f"Keras 2 (tf_keras {imports.tf_keras}) and Keras 3 (keras {imports.keras}) were both "
                     "imported, so the import paid for both: use one (unset TF_USE_LEGACY_KERAS and stop "
                     "importing tf_keras, or import only tf_keras).")
    read = imports.read_bytes
    if read is not None and read > COLD_READ_BYTES:
        seconds = imports.total
        rate = f" ({format_bytes(read / seconds)}/s)" if seconds > 0 else ""
        flags.append(f"{format_bytes(read)} were read from storage during the import{rate}: the libraries were not "
                     "in the page cache (the first run after boot, after the files changed, or page_cache=cold); "
                     "later runs will be faster. A warm import reads next to nothing.")
    return [f for f in flags if f]


def import_notes(imports: ImportFacts | None) -> list[str]:
    """What the import did that costs no time but is worth knowing (not a warning)."""
    # Measured with tensorflow-cpu 2.21: the notice path costs nothing at import (unset,
    # =1 and =0 within 0.1 s of each other, alternated), and =1 logs the notice too.
    if imports and imports.onednn is None and any(p.name == "tensorflow" for p in imports.packages):
        return ["TF_ENABLE_ONEDNN_OPTS is not set, so oneDNN's custom CPU operations are on and TensorFlow logs "
                "a notice about them: set oneDNN off (TF_ENABLE_ONEDNN_OPTS=0) for reproducible numerics and "
                "no notice; setting it on (=1) changes nothing but the record of the choice."]
    return []


def _uncompiled(facts: CompiledPackage, python: str) -> str:
    package, checked, written, uncached = facts.package, facts.checked, facts.written, facts.uncached
    if not checked or (written + uncached) / checked <= UNCOMPILED_SHARE:
        return ""
    label, share = _LABELS.get(package, package), round(100 * (written + uncached) / checked)
    if uncached >= written:
        folder = facts.folder or f"the {package} folder in site-packages"
        modules = facts.modules
        return (f"{label}'s .pyc files are missing ({share} % of {checked} of its {modules:,} modules "
                f"checked were compiled at import, which makes the import about 3x slower on every run): run "
                f"`{python} -m compileall -q {folder}` once, or make that folder writable.")
    return (f"{label}'s .pyc files were missing and this run compiled and saved them ({share} % of {checked} "
            "modules checked), which made its import about 3x slower; later runs will be faster.")


def import_line(imports: ImportFacts | None, packages: int = 3) -> str:
    """"Import 2.15 s, own code: tensorflow 1.70 s, keras 300 ms, numpy 48 ms, others 100 ms;
    native libraries 18 %". A package's own code is its modules' self time, which is less than
    the row of its top module (that row holds everything the import pulled in): the parts
    named here add up to the total, so no figure seems to contradict another."""
    if not imports:
        return ""
    total = imports.total
    shown = imports.packages[:packages]
    top = [f"{p.name} {format_duration(p.own)}" for p in shown]
    rest = total - sum(p.own for p in shown)
    if rest >= 0.0005:  # what a figure rounds to nothing is not another part
        top.append(f"others {format_duration(rest)}")
    share = f"native libraries {imports.native_share * 100:.0f} %"
    return f"Import {format_duration(total)}, own code: " + ", ".join(top) + f"; {share}"


# The pane's and the table's rows, in words: a group's time with what it imported, and its own.
GROUPS_CAPTION = ("By module group: the pale bar and first figure are the time from entering the group to "
                  "leaving it, what it imported included, so the top row (tensorflow) is the whole import; the "
                  "solid bar and \"self\" are the group's own code.")
# Outside the X-ray's timed imports but inside the phase: its own start and end (reading
# /proc/self/io), and imports made by other threads, which it does not time.
_UNTIMED_S = 0.02
_UNTIMED_SHARE = 0.05


def phase_gap_line(imports: ImportFacts | None, phase: float | None) -> str:
    """Where the import phase (the outside clock) and the X-ray's total (the imports timed
    inside it) differ by more than noise, how much and why; otherwise nothing."""
    total = imports.total if imports else 0.0
    if not total or phase is None or phase - total <= max(_UNTIMED_S, _UNTIMED_SHARE * phase):
        return ""
    return (f"Import phase {format_duration(phase)}, of which module imports {format_duration(total)}: the other "
            f"{format_duration(phase - total)} were outside any import the X-ray times (its own start and end, "
            "imports made on other threads).")


def missing_xray(record: RunRecord | None) -> str:
    """Why `record` shows no import X-ray, true to its state; "" when it has one."""
    if record is None:
        return "No run yet: the X-ray of `import tensorflow` shows here once a model run has imported it."
    if record.imports:
        return ""
    phase = record.phase(IMPORT)
    if any(name == "warm_start" for name, _ in record.marks):
        return ("No import X-ray: this program started warm, forked from a server that had imported TensorFlow "
                "before the launch, so it had no import to time.")
    if record.is_program:
        took = (f"The program's import took {format_duration(phase.duration)} (the Import row). "
                if phase is not None and phase.duration is not None else "")
        return (f"No import X-ray for a program: tflaunch times `import tensorflow` module by module only in its "
                f"own probe, not inside your program. {took}To see where an import of this interpreter goes, "
                "measure a model with it (Subject: Model), or run `tflaunch bench --imports --model sample:mlp "
                f"--python {shlex.quote(record.config.python)}`.")
    if record.finished_at is None:
        return ("Measuring… the X-ray of `import tensorflow` shows here when the import ends." if
                phase is None or phase.state is not PhaseState.DONE else
                "Measuring… the import ended; its X-ray is being folded.")
    if phase is None or phase.state is not PhaseState.DONE:
        return "No import X-ray: this run ended before its import finished (see its failure in the log)."
    return "No import X-ray: an older tflaunch made this run, before imports were timed module by module."


def import_table(imports: ImportFacts | None, python: str = "python", rows: int = ROWS,
                 phase: float | None = None) -> str:
    """The X-ray for a terminal: the line, the top groups by cumulative time, the flags;
    `phase`, the import phase's duration, adds where the two differ."""
    if not imports:
        return "Import X-ray: not recorded (the run ended before its import finished, or an older tflaunch ran it)."
    total = imports.total
    table = grid(["Module (cumulative)", "Cumulative", "Self", "Share", "Modules"], [
        [g.name, format_duration(g.cumulative), format_duration(g.own),
         f"{100 * g.cumulative / total:.0f} %" if total else "–", str(g.modules)]
        for g in top_by_cumulative(imports, rows)])
    by_self = ", ".join(f"{g.name} {format_duration(g.own)}" for g in top_by_self(imports, 5))
    gap = phase_gap_line(imports, phase)
    lines = [f"{import_line(imports)} ({imports.modules:,} modules imported)", *([gap] if gap else []),
             "", GROUPS_CAPTION, table, "", f"Most time in their own code: {by_self}"]
    return "\n".join([*lines, *(f"warning: {flag}" for flag in import_flags(imports, python)),
                      *(f"note: {note}" for note in import_notes(imports))])
