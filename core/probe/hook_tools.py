"""How the observer's hooks go in without being seen: a method is replaced where it is
defined, by a wrapper that carries its name, docstring, signature and attributes, and a
failure of tflaunch's never reaches the program.

Why the defining class: libraries compare methods by identity to learn whether a subclass
overrides one. Keras' `compile_from_config` skips compiling when
`self.__class__.compile != Trainer.compile`; a wrapper put on `Model` (a subclass of
Trainer) made that true, and `load_model` returned an uncompiled model. Put on `Trainer`,
where `compile` is defined, both sides of every such comparison are the same wrapper, so
a comparison says what it says without tflaunch. The wrapper keeps no mark of its own
(`functools.wraps` copies the original's `__dict__`, such as Keras' `_is_default`); which
functions are ours is kept here instead. Standard library only, Python 3.8: this runs in the
user's interpreter.
"""

import functools
import inspect
from typing import Any, Callable, Dict, Optional, Tuple

# Our wrappers by id, with the original each replaced: a second install finds them here
# instead of wrapping a wrapper, and nothing is added to the wrapper for a program to see.
_ORIGINALS: Dict[int, Tuple[Any, Any]] = {}  # id(wrapper): (wrapper, original)


def guarded(hook: Callable[..., Any]) -> Callable[..., Any]:
    """A hook that can fail without the program noticing."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return hook(*args, **kwargs)
        except Exception:
            return None

    return run


def defining_owner(owner: Any, name: str) -> Any:
    """The class in `owner`'s MRO whose own dictionary holds `name` (a module: itself)."""
    if not isinstance(owner, type):
        return owner
    return next((cls for cls in owner.__mro__ if name in vars(cls)), owner)


def is_ours(function: Any) -> bool:
    pair = _ORIGINALS.get(id(function))
    return pair is not None and pair[0] is function


def wrap(owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Optional[Any]:
    """Replace `name` where `owner` gets it from by make(original). Returns the class or
    module it was replaced in (None when there is nothing to wrap or it is wrapped already)."""
    home = defining_owner(owner, name)
    raw = vars(home).get(name) if isinstance(home, type) else getattr(home, name, None)
    if raw is None or is_ours(raw) or isinstance(raw, (staticmethod, classmethod, property)):
        return None
    wrapper = functools.wraps(raw)(make(raw))
    try:  # Keras reads constructors' arguments with getfullargspec, which ignores __wrapped__
        wrapper.__signature__ = inspect.signature(raw)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    _ORIGINALS[id(wrapper)] = (wrapper, raw)  # the wrapper kept alive: its id stays ours
    setattr(home, name, wrapper)
    return home


def unwrap(owner: Any, name: str) -> None:
    """Put the original back (a hook that has seen all it needs steps out of the way)."""
    home = defining_owner(owner, name)
    current = vars(home).get(name) if isinstance(home, type) else getattr(home, name, None)
    pair = _ORIGINALS.get(id(current))
    if pair is not None and pair[0] is current:
        setattr(home, name, pair[1])
