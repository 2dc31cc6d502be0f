"""The observer's hooks into TensorFlow: devices, loads, the data pipeline's first element,
tf.function calls, traces and gradient tapes. Each hook only reads the clock around the
original and notifies the Observer (observe.py), which holds every rule."""

import importlib
import os
import re
import time
from typing import Any, Callable, Optional

from .hook_tools import guarded, unwrap, wrap

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
        wrap(context.Context, "ensure_initialized", lambda original: _devices(obs, original, context.Context))
    saved = _module("tensorflow.python.saved_model.load")
    if saved is not None:  # and every public module that bound it (tf.saved_model, tf.compat.v2...)
        wrap(saved, "load", lambda original: _saved_model_load(obs, original))
    checkpoint = _module("tensorflow.python.checkpoint.checkpoint")
    if checkpoint is not None:
        for name in ("restore", "read"):
            wrap(checkpoint.Checkpoint, name, lambda original: timed(obs, "load", original))
    iterators = _module("tensorflow.python.data.ops.iterator_ops")
    if iterators is not None:
        wrap(iterators.OwnedIterator, "__init__", lambda original: _iterator_made(obs, original))
        wrap(iterators.OwnedIterator, "_next_internal", lambda original: _element_taken(obs, original))
    functions = _module("tensorflow.python.eager.polymorphic_function.polymorphic_function")
    if functions is not None:
        wrap(functions.Function, "__call__", lambda original: _function_call(obs, original))
    concrete = _module("tensorflow.python.eager.polymorphic_function.concrete_function")
    if concrete is not None:
        wrap(concrete.ConcreteFunction, "__call__", lambda original: _function_call(obs, original))
    tracing = _module("tensorflow.python.eager.polymorphic_function.tracing_compilation")
    if tracing is not None:
        wrap(tracing, "_create_concrete_function", lambda original: _traced(obs, original))
    backprop = _module("tensorflow.python.eager.backprop")
    if backprop is not None:
        wrap(backprop.GradientTape, "__enter__", lambda original: _tape_enter(obs, original))
        wrap(backprop.GradientTape, "__exit__", lambda original: _tape_exit(obs, original))


def timed(obs: Any, phase: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """A load or compile: its first outermost call is reported as `phase`."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        counted = guarded(obs.timed_entered)(phase)
        start = time.time()
        try:
            return original(*args, **kwargs)
        finally:
            guarded(obs.timed_left)(phase, bool(counted), start, time.time())

    return wrapper


def _devices(obs: Any, original: Callable[..., Any], owner: type) -> Callable[..., Any]:
    def ensure_initialized(self: Any) -> Any:
        if getattr(self, "_initialized", True):
            return original(self)
        start = time.time()
        try:
            return original(self)
        finally:
            guarded(obs.devices_ready)(start, time.time())
            # Every eager op asks: once the devices are up, the hook steps out of the way.
            guarded(unwrap)(owner, "ensure_initialized")

    return ensure_initialized


def _saved_model_load(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    load_timed = timed(obs, "load", original)

    def load(*args: Any, **kwargs: Any) -> Any:
        loaded = load_timed(*args, **kwargs)
        guarded(_remember_functions)(obs, loaded)
        return loaded

    return load


def _remember_functions(obs: Any, loaded: Any) -> None:
    """A SavedModel's signatures and restored functions: calling one is an inference."""
    for function in getattr(loaded, "signatures", {}).values():
        obs.loaded_function(id(function))
    for name in ("__call__", "serve", "call", "predict"):
        function = getattr(loaded, name, None)
        if function is not None and hasattr(function, "get_concrete_function"):
            obs.loaded_function(id(function))


def _iterator_made(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def init(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.time()
        result = original(self, *args, **kwargs)
        guarded(obs.iterator_made)(start, time.time())
        return result

    return init


def _element_taken(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def _next_internal(self: Any) -> Any:
        if not guarded(obs.element_wanted)():
            return original(self)
        try:
            return original(self)
        finally:
            guarded(obs.element_taken)(time.time())

    return _next_internal


def _function_call(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        outermost = guarded(obs.function_entered)()
        start = time.time()
        try:
            return original(self, *args, **kwargs)
        finally:
            own = bool(outermost) and bool(guarded(programs_own)(self))
            guarded(obs.function_left)(id(self), bool(outermost), start, time.time(), own)

    return call


def programs_own(function: Any) -> bool:
    """Whether a tf.function wraps the program's own Python code, not a library's (Keras'
    train and predict functions, an optimizer's): its code lies outside every installed
    package's folder."""
    code = getattr(getattr(function, "python_function", None), "__code__", None)
    folder = os.path.dirname(getattr(code, "co_filename", "") or "")
    return bool(folder) and not _INSTALLED.search(folder)


def _traced(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def _create_concrete_function(function_type: Any, type_context: Any, func_graph: Any,
                                  tracing_options: Any) -> Any:
        start = time.time()
        try:
            return original(function_type, type_context, func_graph, tracing_options)
        finally:
            key = id(getattr(tracing_options, "python_function", None))
            guarded(obs.traced)(key, time.time() - start)

    return _create_concrete_function


def _tape_enter(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def enter(self: Any) -> Any:
        guarded(obs.tape_entered)()
        return original(self)

    return enter


def _tape_exit(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def leave(self: Any, *args: Any) -> Any:
        guarded(obs.tape_left)()
        return original(self, *args)

    return leave
