"""Hooks with no wrapper, on Python 3.12+: sys.monitoring (PEP 669) tells the observer when a
function starts and returns, and the function stays the program's own object.

A wrapper, however well dressed (hook_tools.py), is one more frame: a `warnings.warn` with a
stacklevel names the wrapper's line instead of the user's, and a traceback through a hooked
method keeps one frame more. Here nothing is replaced: the function's code object gets local
PY_START and PY_RETURN events for one tool id of ours (3 or 4, whichever is free; another tool,
a debugger or coverage.py, keeps its own), so identity, `inspect`, tracebacks and warnings'
stack levels are those of a plain run. PY_UNWIND (a call that raised) can only be asked for
globally: its callback returns at once for every code object that is not ours.

What a hook sees: at its start, the call's arguments read from the frame's locals (nothing has
run in it yet, so they are what the caller passed); at its end, the value returned, or that it
raised. The function watched is the one the class holds, decorated or not: its return is when
its caller gets control back (a decorated method's inner frame, and what its locals held, are
gone by then, as for a wrapper; PY_RETURN of the inner function comes before its frame is freed,
which for Keras' evaluate is a dataset iterator's teardown, 50-150 ms). A decorator's closure
is one code object for every method it decorates (Keras' traceback_utils `error_handler`), so
a watch is told apart by the closure's contents, read from the frame's free variables.
Events do not fire while a callback of any tool runs, so the observer's own calls into Keras or
TensorFlow are never observed. Standard library only; sys.monitoring is read with getattr, so
the module imports (and says "not available") on Python 3.8-3.11.
"""

import sys
from typing import Any, Callable, Dict, Optional, Tuple

from .cost import COST, clock

_TOOL_IDS = (3, 4)  # 0-2 and 5 are the debugger's, coverage's, the profiler's and the optimizer's
_VARARGS, _VARKEYWORDS = 0x04, 0x08  # inspect.CO_VARARGS, CO_VARKEYWORDS
_GENERATORS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator

# Start(args, kwargs) -> state, or None: this call is not watched; end(state, result, raised).
Start = Callable[[Tuple[Any, ...], Dict[str, Any]], Any]
End = Callable[[Any, Any, bool], None]


class _Watch:
    __slots__ = ("start", "end", "arguments")

    def __init__(self, start: Start, end: Optional[End], arguments: bool) -> None:
        self.start, self.end, self.arguments = start, end, arguments


_monitoring: Any = getattr(sys, "monitoring", None)
_tool: Optional[int] = None
_watched: Dict[Any, Dict[Tuple[int, ...], _Watch]] = {}  # code object: closure key: its watch
_running: Dict[int, Tuple[_Watch, Any]] = {}  # id(frame) of a watched call under way: (watch, state)


def available() -> bool:
    """Whether calls can be watched without a wrapper: Python 3.12+ and a tool id free."""
    return _tool is not None or _claim()


def _claim() -> bool:
    global _tool
    if _monitoring is None:
        return False
    for tool in _TOOL_IDS:
        try:
            if _monitoring.get_tool(tool) is None:
                _monitoring.use_tool_id(tool, "tflaunch")
            else:
                continue
        except ValueError:  # taken meanwhile
            continue
        events = _monitoring.events
        _monitoring.register_callback(tool, events.PY_START, _started)
        _monitoring.register_callback(tool, events.PY_RETURN, _returned)
        _monitoring.register_callback(tool, events.PY_UNWIND, _unwound)
        _monitoring.set_events(tool, events.PY_UNWIND)
        _tool = tool
        return True
    return False


def _closure_key(function: Any) -> Tuple[int, ...]:
    """Which of the functions sharing one code object this is: its closure's contents, by id
    (a decorator's wrapper, Keras' `error_handler`, is one code object for every method)."""
    return tuple(id(cell.cell_contents) for cell in getattr(function, "__closure__", None) or ())


def _frame_key(frame: Any, code: Any) -> Tuple[int, ...]:
    """The same key, read from a call's frame: its free variables are the closure's cells."""
    if not code.co_freevars:
        return ()
    local = frame.f_locals
    return tuple(id(local[name]) for name in code.co_freevars)


def _code(function: Any) -> Any:
    code = getattr(function, "__code__", None)
    return code if code is not None and hasattr(code, "co_varnames") else None


def watch(function: Any, start: Start, end: Optional[End], arguments: bool) -> bool:
    """Watch every call of `function` (as it is, decorated or not: a call's end is when the
    caller gets control back, after the decorated function's own frame is gone and its
    locals, a whole dataset iterator for `evaluate`, are freed). False when it cannot be
    watched (no Python code, a generator, no tool id free): the caller wraps it instead."""
    code = _code(function)
    if code is None or code.co_flags & _GENERATORS or is_watched(function) or not available():
        return False
    try:
        _closure_key(function)
    except ValueError:  # an empty cell: no key to tell it by
        return False
    _watched.setdefault(code, {})[_closure_key(function)] = _Watch(start, end, arguments)
    events = _monitoring.events
    wanted = events.PY_START | (events.PY_RETURN if any(w.end for w in _watched[code].values()) else 0)
    _monitoring.set_local_events(_tool, code, wanted)
    return True


def is_watched(function: Any) -> bool:
    code = _code(function)
    try:
        return code in _watched and _closure_key(function) in _watched[code]
    except ValueError:
        return False


def unwatch(function: Any) -> None:
    """Stop watching `function` (a hook that has seen all it needs steps out of the way)."""
    if not is_watched(function) or _tool is None:
        return
    code = _code(function)
    del _watched[code][_closure_key(function)]
    if not _watched[code]:
        del _watched[code]
        _monitoring.set_local_events(_tool, code, 0)


def arguments(frame: Any, code: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """A call's arguments from its frame at PY_START: the positional parameters (self first)
    and *args as a tuple, keyword-only ones and **kwargs as a dict."""
    names, count, local = code.co_varnames, code.co_argcount, frame.f_locals
    last = count + code.co_kwonlyargcount
    args = tuple(local[n] for n in names[:count])
    kwargs = {n: local[n] for n in names[count:last] if n in local}
    if code.co_flags & _VARARGS:
        args += tuple(local[names[last]])
        last += 1
    if code.co_flags & _VARKEYWORDS:
        kwargs.update(local[names[last]])
    return args, kwargs


def _started(code: Any, _offset: int) -> None:
    watches = _watched.get(code)
    if watches is None:
        return
    began = clock()
    try:  # nothing of ours may reach the program: an exception here would be raised in its call
        frame = sys._getframe(1)  # the watched call's own frame
        watch_ = watches.get(_frame_key(frame, code))
        if watch_ is None:  # another function of the same code (another method, same decorator)
            return
        args, kwargs = arguments(frame, code) if watch_.arguments else ((), {})
        state = watch_.start(args, kwargs)
        if state is not None and watch_.end is not None:
            _running[id(frame)] = (watch_, state)
    except Exception:
        pass
    COST.hooked(clock() - began)


def _ended(code: Any, result: Any, raised: bool) -> None:
    began = clock()
    try:
        entry = _running.pop(id(sys._getframe(2)), None)
        if entry is not None:
            entry[0].end(entry[1], result, raised)  # type: ignore[misc]  # only watches with an end
    except Exception:
        pass
    COST.hooks += clock() - began


def _returned(code: Any, _offset: int, result: Any) -> None:
    if code in _watched:
        _ended(code, result, False)


def _unwound(code: Any, _offset: int, _exception: BaseException) -> None:
    if code in _watched:  # every frame that raises in the program comes here: answered at once
        _ended(code, None, True)
