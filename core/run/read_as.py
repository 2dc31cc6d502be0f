"""A stored or reported figure read as its type, or None: the typed descriptions of a run
(model_facts, gpus/launch_gpus) read what a child said or a history row holds, and a value
of another type is no figure, never an error."""

from __future__ import annotations

from typing import Any


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def count(value: Any) -> int | None:
    """A whole number from 0 up (True is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None
