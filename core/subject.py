"""The subject of a run as a value: a model, which the probe loads and calls, or a program,
the user's own command line, which the launch hook observes.

What differs between the two is said here, once: the phases each can report, where each
is ready, its words, and which settings it reads (each setting's `read_by` in the settings
table, core/settings/vocabulary.py, with the reason the other subject does not read it).
Code that would branch on "is it a program" asks the subject instead.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import Enum
from typing import Protocol

from .phases import MODEL_READY, UNTIL_PHASE, subject_phases


class _ReadBy(Protocol):
    @property
    def read_by(self) -> Collection[Subject]: ...


class Subject(str, Enum):
    MODEL = "model"
    PROGRAM = "program"

    @classmethod
    def of(cls, program: object) -> Subject:
        """The subject of a run whose command line is `program` (empty or none: the model)."""
        return cls.PROGRAM if program else cls.MODEL

    @property
    def is_program(self) -> bool:
        return self is Subject.PROGRAM

    @property
    def words(self) -> str:
        """How it measured, in a word: "model" (the probe) or "program" (observed)."""
        return self.value

    @property
    def noun(self) -> str:
        """"a model", "a program": the subject in a sentence."""
        return f"a {self.value}"

    @property
    def other(self) -> Subject:
        return Subject.MODEL if self is Subject.PROGRAM else Subject.PROGRAM

    def phases(self, call: str = "function") -> tuple[str, ...]:
        """The phases of the start it can report: a model's by how it is called (--call), a
        program's as the launch hook observes them (it reaches a subset, and marks its own)."""
        return subject_phases(self.is_program, call)

    def ready_phase(self, until: str) -> str | None:
        """The phase whose end is its ready point: a model's first inference; a program's the
        phase --until names (None for mark:NAME and exit, which are no phase's end)."""
        return UNTIL_PHASE.get(until) if self.is_program else MODEL_READY

    @property
    def first_work(self) -> str:
        """What its first unit of work is called: a program's first step, a model's first call."""
        return "first step" if self.is_program else "first call"

    def reads(self, setting: _ReadBy) -> bool:
        """Whether a run of this subject reads the setting (the settings table says)."""
        return self in setting.read_by


BOTH: frozenset[Subject] = frozenset(Subject)
