"""What a run measured, in its own words: a model by its file, a program by its command line.

A run's LaunchConfig holds every setting, including those of the subject it did not
measure (the app's form keeps a hidden Working folder while a model is chosen; a stored
program run still names the model the form showed). Comparisons, labels and titles read a
run through these functions, so a hidden field of the other subject never tells runs apart,
joins them, or names them.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import fields

from ..run.record import RunRecord
from ..settings.config import LaunchConfig

# Settings only one subject reads: the probe's model and how it is called; the program's
# folder and ready point. `program` itself says which subject a config measures.
MODEL_ONLY = ("model", "signature", "imports", "unsafe_deserialization", "batch", "inputs", "call")
PROGRAM_ONLY = ("program", "workdir", "until")
_DEFAULTS = LaunchConfig()


def own_config(config: LaunchConfig) -> LaunchConfig:
    """The config with the other subject's settings at their defaults."""
    other = MODEL_ONLY if config.is_program else PROGRAM_ONLY
    return config.replace(**{name: getattr(_DEFAULTS, name) for name in other})


def measurement_kind(record: RunRecord) -> str:
    """How the run measured: "model" (the probe) or "program" (observed phase by phase)."""
    return "program" if record.is_program else "model"


def subject_words(record: RunRecord) -> str:
    """The run's subject as its user wrote it: the model, or the command line with its quotes."""
    if record.config.is_program:
        return shlex.join(record.config.program)
    return record.config.model


def subjects_title(records: Sequence[RunRecord]) -> str:
    """What a set of runs measured, for a title: the one subject, or how many of each kind."""
    subjects = list(dict.fromkeys(subject_words(r) for r in records))
    if len(subjects) == 1:
        return subjects[0]
    kinds: dict[str, int] = {}
    for kind in dict.fromkeys((measurement_kind(r), subject_words(r)) for r in records):
        kinds[kind[0]] = kinds.get(kind[0], 0) + 1
    return " and ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in kinds.items())


def reads(config: LaunchConfig, name: str) -> bool:
    """Whether a run of this config reads the setting (a program reads no model's settings)."""
    return (name not in MODEL_ONLY or not config.is_program) and (name not in PROGRAM_ONLY or config.is_program)


def own_settings_differ(records: Sequence[RunRecord]) -> list[str]:
    """Settings, in declaration order, whose value differs between the runs that read it
    (a model's settings among model runs, a program's among programs). The subject itself
    (model, program) is not among them: subject_words names it."""
    configs = [own_config(r.config) for r in records]
    names = []
    for f in fields(LaunchConfig):
        if f.name in ("model", "program"):
            continue
        values = {repr(getattr(c, f.name)) for c in configs if reads(c, f.name)}
        if len(values) > 1:
            names.append(f.name)
    return names
