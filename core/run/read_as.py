"""A stored or reported figure read as its type, or None: the typed descriptions of a run
(model_facts, environment_facts, pack_facts, gpus/launch_gpus) and the history's reader take
what a child said or a history row holds, and a value of another type is no figure, never an
error."""

from __future__ import annotations

from typing import Any


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def count(value: Any, below: int | None = None) -> int | None:
    """A whole number from 0 up, and under `below` when given (True is not one)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return None
    return value if below is None or value < below else None


def seconds(value: Any, below: float = 1e6) -> float | None:
    """A duration in seconds, from 0 up and under `below` (a stored junk figure is none)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < below:
        return None
    return float(value)


def texts(value: Any) -> tuple[str, ...]:
    """The strings of a list, the rest left out; () for anything not a list."""
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def capability(value: Any) -> tuple[int, int] | None:
    """A GPU's compute capability, (major, minor), from the two whole numbers it is sent as."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(count(v) is not None for v in value):
        return value[0], value[1]
    return None
