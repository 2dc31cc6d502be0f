"""What a profile keeps of its subject: the settings that subject reads, never the command line.

A profile measured on a program keeps no model (a program loads its own), and one measured
on a model no command line: the file says which it was (`subject`), and an older file says
it only through its evidence (a program's command line, kept as what was measured).
"""

from __future__ import annotations

import shlex
from typing import Any, Protocol

from ..settings.config import LaunchConfig
from ..settings.vocabulary import SETTINGS
from ..subject import Subject

# What a run was measured on, not a setting to share: never in a profile's settings.
MEASURED_ON = ("program", "workdir", "until")


def declared_subject(value: Any) -> Subject | None:
    """The subject a profile file declares (`subject = "program"`); None in an older file."""
    return Subject(value) if value in (Subject.MODEL.value, Subject.PROGRAM.value) else None


def profile_subject(declared: Subject | None, config: LaunchConfig, evidence: dict[str, Any]) -> Subject:
    """The subject a profile was measured on: as declared, else its config's, else its evidence's."""
    if declared is not None:
        return declared
    program = evidence.get("program") if isinstance(evidence, dict) else None
    return Subject.of(config.program or (isinstance(program, list) and program))


def stored_settings(subject: Subject) -> list[str]:
    """The settings a profile of `subject` keeps, in declaration order: those it reads."""
    return [s.name for s in SETTINGS if s.reads(subject) and s.name not in MEASURED_ON]


def to_keep(config: LaunchConfig, subject: Subject) -> dict[str, Any]:
    """A profile's [settings] table: the values it keeps (TOML has no null; an empty table is the default)."""
    kept = stored_settings(subject)
    return {k: v for k, v in config.to_dict().items() if v is not None and v != {} and k in kept}


def applied_to(config: LaunchConfig, subject: Subject, form: LaunchConfig) -> LaunchConfig:
    """`form` with a profile's settings: what the profile does not keep (a program's model and
    command line, a model's command line and folder) stays as `form` has it; a model's profile
    makes the model the subject."""
    changes = {name: getattr(config, name) for name in stored_settings(subject)}
    return form.replace(**changes, **({} if subject.is_program else {"program": ()}))


class _Measured(Protocol):
    config: LaunchConfig
    evidence: dict[str, Any]

    @property
    def subject_type(self) -> Subject: ...


def measured_on(profile: _Measured) -> str:
    """What a profile's evidence was measured on: its model, or the program's command line."""
    program = profile.evidence.get("program")
    if isinstance(program, list) and program:
        return shlex.join(str(part) for part in program)
    return "a program" if profile.subject_type.is_program else profile.config.model
