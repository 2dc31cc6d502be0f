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
from typing import TYPE_CHECKING

from ..settings.config import LaunchConfig
from ..settings.vocabulary import BY_NAME, SETTINGS
from ..subject import Subject

if TYPE_CHECKING:
    from ..run.record import RunRecord


def unread(subject: Subject) -> tuple[str, ...]:
    """The settings a run of `subject` does not read, in declaration order (Setting.read_by)."""
    return tuple(s.name for s in SETTINGS if not s.reads(subject))


# Settings only one subject reads, as the settings table says: the probe's model and how it is
# called (and jit_compile, which a program sets in its own code); the program's command line,
# folder and ready point. `program` itself says which subject a config measures.
MODEL_ONLY = unread(Subject.PROGRAM)
PROGRAM_ONLY = unread(Subject.MODEL)
_DEFAULTS = LaunchConfig()


def own_config(config: LaunchConfig) -> LaunchConfig:
    """The config with the settings its subject does not read at their defaults."""
    return config.replace(**{name: getattr(_DEFAULTS, name) for name in unread(config.subject_type)})


def measurement_kind(record: RunRecord) -> str:
    """How the run measured: "model" (the probe) or "program" (observed phase by phase)."""
    return record.subject_type.words


def subject_words(record: RunRecord) -> str:
    """The run's subject as its user wrote it: the model, or the command line with its quotes."""
    if record.subject_type.is_program:
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
    return BY_NAME[name].reads(config.subject_type)


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
