"""How the observer's hooks go in without being seen. On Python 3.12+ nothing is replaced:
sys.monitoring watches the function (monitoring.py). Elsewhere (3.8-3.11, or when both tool
ids tflaunch may use are taken) a method is replaced where it is defined, by a wrapper that
carries its name, docstring, signature and attributes. Either way a hook is a start and an
end (hook()), and a failure of tflaunch's never reaches the program.

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
import sys
from typing import Any, Callable, Dict, Optional, Tuple

from . import monitoring
from .cost import COST, clock
from .monitoring import End, Start

Args = Tuple[Any, ...]
Kwargs = Dict[str, Any]
Hook = Tuple[Start, End]  # a hook's start and end, as hook() takes them

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


def hook(owner: Any, name: str, start: Start, end: Optional[End] = None, arguments: bool = True) -> Optional[Any]:
    """Watch every call of `name` where `owner` gets it from: start(args, kwargs) as it begins
    (its state, or None: this call is not watched), end(state, result, raised) once it has
    returned or raised. On Python 3.12+ with no wrapper at all (monitoring.py), else by a
    wrapper put where the function is defined (wrap). `arguments`: whether start reads the
    call's arguments (the frame's locals, under sys.monitoring: only where needed). Returns
    the class or module it went into (None when there is nothing to hook or it is hooked)."""
    home = defining_owner(owner, name)
    raw = vars(home).get(name) if isinstance(home, type) else getattr(home, name, None)
    if raw is None or is_ours(raw) or monitoring.is_watched(raw):
        return None
    if not isinstance(raw, (staticmethod, classmethod, property)) and monitoring.watch(raw, start, end, arguments):
        return home
    return wrap(owner, name, lambda original: _hooked(original, start, end))


def unhook(owner: Any, name: str) -> None:
    """Stop watching `name` (a hook that has seen all it needs steps out of the way)."""
    home = defining_owner(owner, name)
    current = vars(home).get(name) if isinstance(home, type) else getattr(home, name, None)
    if current is not None and monitoring.is_watched(current):
        monitoring.unwatch(current)
    else:
        unwrap(owner, name)


def _hooked(original: Callable[..., Any], start: Start, end: Optional[End]) -> Callable[..., Any]:
    """The wrapper that calls start and end around `original` (Python 3.8-3.11)."""

    start_, end_ = guarded(start), None if end is None else guarded(end)

    # Its own time, before and after the original's, is what watching costs this call (cost.py).
    def hooked(*args: Any, **kwargs: Any) -> Any:
        began = clock()
        state = start_(args, kwargs)
        COST.hooked(clock() - began)
        if state is None or end_ is None:
            return original(*args, **kwargs)
        try:
            result = original(*args, **kwargs)
        except BaseException:
            began = clock()
            end_(state, None, True)
            COST.hooks += clock() - began
            raise
        began = clock()
        end_(state, result, False)
        COST.hooks += clock() - began
        return result

    return hooked


def wrap(owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Optional[Any]:
    """Replace `name` where `owner` gets it from by make(original). Returns the class or
    module it was replaced in (None when there is nothing to wrap or it is wrapped already)."""
    home = defining_owner(owner, name)
    raw = vars(home).get(name) if isinstance(home, type) else getattr(home, name, None)
    if raw is None or is_ours(raw) or isinstance(raw, (staticmethod, classmethod, property)):
        return None
    wrapper = _dressed_as(make(raw), raw)
    _ORIGINALS[id(wrapper)] = (wrapper, raw)  # the wrapper kept alive: its id stays ours
    setattr(home, name, wrapper)
    if not isinstance(home, type):
        _rebind(home, name, raw, wrapper)
    return home


def _dressed_as(wrapper: Any, raw: Any) -> Any:
    """`wrapper` made to read as `raw` to whoever looks: its name, docstring, module, attributes
    (Keras' `_is_default`) and a `__wrapped__` only where `raw` has one; its signature; and its
    code's file, name and first line, so that inspect.getsourcefile and getsource find Keras'
    and TensorFlow's own source, and each library's traceback filter (Keras' and TensorFlow's
    traceback_utils drop frames from their own files) drops the wrapper's frame with theirs."""
    functools.update_wrapper(wrapper, raw)
    if "__wrapped__" in vars(raw):
        wrapper.__wrapped__ = raw.__wrapped__
    else:
        del wrapper.__wrapped__
    try:  # Keras reads constructors' arguments with getfullargspec
        wrapper.__signature__ = inspect.signature(raw)
    except (TypeError, ValueError):
        pass
    for attribute in ("__defaults__", "__kwdefaults__"):
        try:
            setattr(wrapper, attribute, getattr(raw, attribute, None))
        except (TypeError, AttributeError):
            pass
    code = getattr(raw, "__code__", None)
    if code is not None:
        names = {"co_filename": code.co_filename, "co_name": code.co_name, "co_firstlineno": code.co_firstlineno}
        if hasattr(code, "co_qualname"):  # Python 3.11+
            names["co_qualname"] = code.co_qualname
        try:
            wrapper.__code__ = wrapper.__code__.replace(**names)
        except (TypeError, ValueError, AttributeError):
            pass
    return wrapper


def _rebind(home: Any, name: str, raw: Any, wrapper: Any) -> None:
    """Every loaded module that bound the module function `raw` under its own name (the public
    API modules: tf.saved_model, tf.compat.v2.saved_model, keras.models, keras.saving...) gets
    the wrapper too: one function wherever the program reaches it, as without tflaunch."""
    for module in list(sys.modules.values()):
        try:
            if module is not home and vars(module).get(name) is raw:
                setattr(module, name, wrapper)
        except TypeError:  # a module stand-in with no __dict__
            continue


def unwrap(owner: Any, name: str) -> None:
    """Put the original back (a hook that has seen all it needs steps out of the way)."""
    home = defining_owner(owner, name)
    current = vars(home).get(name) if isinstance(home, type) else getattr(home, name, None)
    pair = _ORIGINALS.get(id(current))
    if pair is not None and pair[0] is current:
        setattr(home, name, pair[1])
