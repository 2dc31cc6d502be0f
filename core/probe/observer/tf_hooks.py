"""The observer's hooks into TensorFlow: devices, loads, the data pipeline's first element,
tf.function calls, traces and gradient tapes. Each hook is a start and an end around the
original call (hook_tools.hook: watched by sys.monitoring on Python 3.12+, wrapped before):
it only reads the clock and notifies the Observer (observe.py), which holds every rule."""

import importlib
import os
import re
import time
from typing import Any, Callable, Optional

from .hook_tools import Args, Hook, Kwargs, hook, unhook

# Where installed packages live, in every layout (venv, conda, Debian's dist-packages).
_INSTALLED = re.compile(r"[/\\](site|dist)-packages([/\\]|$)")


def _module(name: str) -> Optional[Any]:
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def patch_tensorflow(obs: Any) -> None:
    """Hooks into TensorFlow's own classes, right after `import tensorflow` finished."""
    context = _module("tensorflow.python.eager.context")
    if context is not None:
        _devices(obs, context.Context)
    saved = _module("tensorflow.python.saved_model.load")
    if saved is not None:  # and every public module that bound it (tf.saved_model, tf.compat.v2...)
        hook(saved, "load", *_saved_model_load(obs), arguments=False)
    checkpoint = _module("tensorflow.python.checkpoint.checkpoint")
    if checkpoint is not None:
        for name in ("restore", "read"):
            hook(checkpoint.Checkpoint, name, *timed(obs, "load"), arguments=False)
    iterators = _module("tensorflow.python.data.ops.iterator_ops")
    if iterators is not None:
        hook(iterators.OwnedIterator, "__init__", *made(obs.iterator_made), arguments=False)
        hook(iterators.OwnedIterator, "_next_internal", *_element_taken(obs), arguments=False)
    functions = _module("tensorflow.python.eager.polymorphic_function.polymorphic_function")
    if functions is not None:
        hook(functions.Function, "__call__", *_function_call(obs))
    concrete = _module("tensorflow.python.eager.polymorphic_function.concrete_function")
    if concrete is not None:
        hook(concrete.ConcreteFunction, "__call__", *_function_call(obs))
    tracing = _module("tensorflow.python.eager.polymorphic_function.tracing_compilation")
    if tracing is not None:
        hook(tracing, "_create_concrete_function", *_traced(obs))
    backprop = _module("tensorflow.python.eager.backprop")
    if backprop is not None:
        hook(backprop.GradientTape, "__enter__", lambda _a, _k: obs.tape_entered(), arguments=False)
        hook(backprop.GradientTape, "__exit__", lambda _a, _k: obs.tape_left(), arguments=False)


def timed(obs: Any, phase: str) -> Hook:
    """A load or compile: its first outermost call is reported as `phase` (start, end)."""

    def start(_args: Args, _kwargs: Kwargs) -> Any:
        return bool(obs.timed_entered(phase)), time.time()

    def end(state: Any, _result: Any, _raised: bool) -> None:
        obs.timed_left(phase, state[0], state[1], time.time())

    return start, end


def made(notify: Callable[[float, float], None]) -> Hook:
    """A constructor that made its object: notify(start, end); nothing when it raised."""

    def end(started: float, _result: Any, raised: bool) -> None:
        if not raised:
            notify(started, time.time())

    return (lambda _a, _k: time.time()), end


def _devices(obs: Any, owner: type) -> None:
    def start(args: Args, _kwargs: Kwargs) -> Any:
        return None if getattr(args[0], "_initialized", True) else time.time()

    def end(started: float, _result: Any, _raised: bool) -> None:
        obs.devices_ready(started, time.time())
        # Every eager op asks: once the devices are up, the hook steps out of the way.
        unhook(owner, "ensure_initialized")

    hook(owner, "ensure_initialized", start, end)


def _saved_model_load(obs: Any) -> Hook:
    start, timed_end = timed(obs, "load")

    def end(state: Any, loaded: Any, raised: bool) -> None:
        timed_end(state, loaded, raised)
        if not raised:
            _remember_functions(obs, loaded)

    return start, end


def _remember_functions(obs: Any, loaded: Any) -> None:
    """A SavedModel's signatures and restored functions: calling one is an inference."""
    for function in getattr(loaded, "signatures", {}).values():
        obs.loaded_function(id(function))
    for name in ("__call__", "serve", "call", "predict"):
        function = getattr(loaded, name, None)
        if function is not None and hasattr(function, "get_concrete_function"):
            obs.loaded_function(id(function))


def _element_taken(obs: Any) -> Hook:
    def start(_args: Args, _kwargs: Kwargs) -> Any:
        return True if obs.element_wanted() else None

    return start, lambda _state, _result, _raised: obs.element_taken(time.time())


def _function_call(obs: Any) -> Hook:
    def start(args: Args, _kwargs: Kwargs) -> Any:
        return args[0], bool(obs.function_entered()), time.time()

    def end(state: Any, _result: Any, _raised: bool) -> None:
        function, outermost, started = state
        obs.function_left(id(function), outermost, started, time.time(), outermost and programs_own(function))

    return start, end


def programs_own(function: Any) -> bool:
    """Whether a tf.function wraps the program's own Python code, not a library's (Keras'
    train and predict functions, an optimizer's): its code lies outside every installed
    package's folder."""
    try:
        code = getattr(getattr(function, "python_function", None), "__code__", None)
    except Exception:
        return False
    folder = os.path.dirname(getattr(code, "co_filename", "") or "")
    return bool(folder) and not _INSTALLED.search(folder)


def _traced(obs: Any) -> Hook:
    """_create_concrete_function(function_type, type_context, func_graph, tracing_options)."""

    def start(args: Args, kwargs: Kwargs) -> Any:
        options = args[3] if len(args) > 3 else kwargs.get("tracing_options")
        return id(getattr(options, "python_function", None)), time.time()

    def end(state: Any, _result: Any, _raised: bool) -> None:
        obs.traced(state[0], time.time() - state[1])

    return start, end
