"""One setting of a run as vocabulary.SETTINGS declares it: what kind of value it takes,
its default, the words for its values, and how a value typed as text is read.

The command line, the app's editors, the sweep's axes, the launch checks and the display
text are all made from these declarations, so a setting's choices and default are stated once.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..subject import BOTH, Subject

DEFAULT = "default"  # the word for "leave it to TensorFlow, the driver or the environment" (None)


def parse_switch(text: str) -> bool:
    """on or off as a user types it (on/true/1/yes, off/false/0/no); ValueError otherwise."""
    if text.lower() in ("on", "true", "1", "yes"):
        return True
    if text.lower() in ("off", "false", "0", "no"):
        return False
    raise ValueError("use on or off")


def parse_tristate(text: str) -> bool | None:
    """default (TensorFlow's own choice), on or off."""
    return None if text.lower() == DEFAULT else parse_switch(text)


class Reach(str, Enum):
    """How a setting gets to TensorFlow, which decides whether a launch can apply it."""

    ENVIRONMENT = "environment"  # a variable set before exec: every program sees it
    TF_CONFIG = "tf.config"  # a call right after `import tensorflow`: the launch hook makes it
    MEASUREMENT = "measurement"  # how tflaunch measures (model, inputs): not part of a launch
    LAUNCHER = "launcher"  # which interpreter starts, and when to give up


class Kind(str, Enum):
    """What a setting's value is, which decides its flag, its editor and how text is read."""

    SWITCH = "switch"  # False or True: a flag without a value, a check box
    TRISTATE = "tristate"  # None (the default), True or False: default|on|off
    CHOICE = "choice"  # one of `choices` (or None, "default", when that is the default)
    COUNT = "count"  # a whole number within `bounds`
    MIB = "mib"  # a positive number of MiB, or None (no limit)
    SECONDS = "seconds"  # a positive, finite number of seconds
    TEXT = "text"  # a word or a path
    LIST = "list"  # several texts, in order
    PAIRS = "pairs"  # NAME -> text
    INDICES = "indices"  # whole numbers from 0 (GPUs), or None for all


@dataclass(frozen=True, eq=False)  # one declaration per setting: the same by identity (and hashable so)
class Setting:
    name: str  # the LaunchConfig field (and the profile's TOML key)
    label: str
    help: str
    reach: Reach
    group: str  # where the form shows it
    cli: str  # the command-line flag
    kind: Kind = Kind.TEXT
    default: Any = None
    choices: Mapping[Any, str] = field(default_factory=dict)  # CHOICE: each value and the words for it
    unset: tuple[str, str] | None = None  # what the default means: in a table, in a one-line summary
    bounds: tuple[int, int] | None = None  # COUNT: the lowest and highest value allowed
    unit: str = ""  # after a number: MiB, s, calls
    sweep: str | None = None  # the values a sweep offers first; None: a sweep cannot vary it
    # The subjects whose runs read it (a program decides its batch and its jit_compile in its
    # own code), and why the other one does not: the form, Compare, the sweep and the doctor
    # all ask here.
    read_by: frozenset[Subject] = BOTH
    unread_because: str = ""

    def reads(self, subject: Subject) -> bool:
        return subject in self.read_by

    def why_unread(self, subject: Subject) -> str | None:
        """Why a run of `subject` does not read it, or None when it does."""
        return None if self.reads(subject) else self.unread_because

    @property
    def axis(self) -> str:
        """Its name as a sweep's --vary spells it: the flag's, with underscores."""
        return self.cli.lstrip("-").replace("-", "_")

    def fresh_default(self) -> Any:
        """The default, a copy where it could be changed in place (a dict)."""
        return copy.copy(self.default)

    def words(self) -> list[str]:
        """The values as a user types them (CHOICE, TRISTATE), "default" first where it is one."""
        if self.kind is Kind.TRISTATE:
            return [DEFAULT, "on", "off"]
        values = [str(value) for value in self.choices]
        return [DEFAULT, *values] if self.default is None else values

    def parse(self, text: str) -> Any:
        """A value as typed on a command line or in a sweep's list; ValueError says what to type."""
        word = text.strip().lower()
        if self.kind is Kind.SWITCH:
            return parse_switch(word)
        if self.kind is Kind.TRISTATE:
            try:
                return parse_tristate(word)
            except ValueError:
                raise ValueError(f"use one of {', '.join(self.words())}") from None
        if self.kind is Kind.CHOICE:
            if word == DEFAULT and self.default is None:
                return None
            for value in self.choices:
                if str(value) == word:
                    return value
            raise ValueError(f"use one of {', '.join(self.words())}")
        if self.kind is Kind.COUNT:
            low, high = self.bounds or (0, 1 << 62)
            if not (word.isascii() and word.isdigit()) or not low <= int(word) <= high:
                raise ValueError(f"use a whole number from {low} to {high}")
            return int(word)
        if self.kind is Kind.MIB:
            if word == "none":
                return None
            if not (word.isascii() and word.isdigit()) or int(word) <= 0:
                raise ValueError("use a whole number of MiB above 0, or none")
            return int(word)
        if self.kind is Kind.SECONDS:
            return _seconds(word)
        raise ValueError(f"{self.label} is not one word")

    def is_unset(self, value: Any) -> bool:
        """Whether `value` is the default that `unset` gives words to (0 is unset, False is not)."""
        return self.unset is not None and value == self.default and type(value) is type(self.default)


def _seconds(text: str) -> float:
    try:  # ASCII only: float() reads '١' as 1
        value = float(text) if text.isascii() else math.nan
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if not 0 < value < math.inf:  # nan fails both
        raise ValueError("must be a positive, finite number of seconds")
    return value
