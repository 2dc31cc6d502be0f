"""How the observer's hooks go in: replacing a method by a wrapper that keeps its name,
docstring and signature, and never lets a failure of tflaunch's reach the program."""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .observe import Observer


def guarded(hook: Callable[..., Any]) -> Callable[..., Any]:
    """A hook that can fail without the program noticing."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return hook(*args, **kwargs)
        except Exception:
            return None

    return run


def wrap(owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Replace owner.name by make(original), keeping its name and docstring."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__tflaunch__", False):
        return
    wrapper = functools.wraps(original)(make(original))
    wrapper.__tflaunch__ = True  # type: ignore[attr-defined]
    import inspect  # loaded by TensorFlow already: nothing added to the program's start

    try:  # Keras reads constructors' arguments with getfullargspec, which ignores __wrapped__
        wrapper.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    setattr(owner, name, wrapper)


def timed_once(obs: Observer, phase: str, depth: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A wrapper that reports the first outermost call of a function as `phase`."""

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if obs.reported.get(phase) or (depth and getattr(obs, depth)):
                if depth:
                    setattr(obs, depth, getattr(obs, depth) + 1)
                    try:
                        return original(*args, **kwargs)
                    finally:
                        setattr(obs, depth, getattr(obs, depth) - 1)
                return original(*args, **kwargs)
            guarded(obs.close_build)()
            start = time.time()
            if depth:
                setattr(obs, depth, getattr(obs, depth) + 1)
            try:
                return original(*args, **kwargs)
            finally:
                if depth:
                    setattr(obs, depth, getattr(obs, depth) - 1)
                guarded(obs.once)(phase, start)

        return wrapper

    return make
