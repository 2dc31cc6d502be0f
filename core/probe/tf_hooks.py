"""The observer's hooks into TensorFlow: devices, loads, the data pipeline's first element,
tf.function calls (a step or an inference), traces and gradient tapes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from .hook_tools import guarded, timed_once, wrap

if TYPE_CHECKING:
    from .observe import Observer


def patch_tensorflow(obs: Observer) -> None:
    """Hooks into TensorFlow's own classes, right after `import tensorflow` finished."""
    import importlib

    def module(name: str) -> Any:
        try:
            return importlib.import_module(name)
        except Exception:
            return None

    context = module("tensorflow.python.eager.context")
    if context is not None:
        wrap(context.Context, "ensure_initialized", lambda original: _devices(obs, original, context.Context))
    saved = module("tensorflow.python.saved_model.load")
    api = module("tensorflow._api.v2.saved_model")
    if saved is not None:
        wrap(saved, "load", lambda original: _saved_model_load(obs, original))
        if api is not None and hasattr(api, "load"):
            api.load = saved.load
    checkpoint = module("tensorflow.python.checkpoint.checkpoint")
    if checkpoint is not None:
        for name in ("restore", "read"):
            wrap(checkpoint.Checkpoint, name, timed_once(obs, "load", "load_depth"))
    iterators = module("tensorflow.python.data.ops.iterator_ops")
    if iterators is not None:
        wrap(iterators.OwnedIterator, "__init__", lambda original: _iterator_made(obs, original))
        wrap(iterators.OwnedIterator, "_next_internal", lambda original: _element_taken(obs, original))
    functions = module("tensorflow.python.eager.polymorphic_function.polymorphic_function")
    if functions is not None:
        wrap(functions.Function, "__call__", lambda original: _function_call(obs, original))
    concrete = module("tensorflow.python.eager.polymorphic_function.concrete_function")
    if concrete is not None:
        wrap(concrete.ConcreteFunction, "__call__", lambda original: _function_call(obs, original))
    tracing = module("tensorflow.python.eager.polymorphic_function.tracing_compilation")
    if tracing is not None:
        wrap(tracing, "_create_concrete_function", lambda original: _traced(obs, original))
    backprop = module("tensorflow.python.eager.backprop")
    if backprop is not None:
        wrap(backprop.GradientTape, "__enter__", lambda original: _tape_enter(obs, original))
        wrap(backprop.GradientTape, "__exit__", lambda original: _tape_exit(obs, original))


def _devices(obs: Observer, original: Callable[..., Any], owner: type) -> Callable[..., Any]:
    def ensure_initialized(self: Any) -> Any:
        if obs.reported.get("devices") or getattr(self, "_initialized", True):
            return original(self)
        start = time.time()
        try:
            return original(self)
        finally:
            guarded(obs.once)("devices", start)
            # Every eager op asks: once the devices are up, the hook steps out of the way.
            setattr(owner, "ensure_initialized", original)  # noqa: B010

    return ensure_initialized


def _saved_model_load(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    timed = timed_once(obs, "load", "load_depth")(original)

    def load(*args: Any, **kwargs: Any) -> Any:
        loaded = timed(*args, **kwargs)
        guarded(_remember_functions)(obs, loaded)
        return loaded

    return load


def _remember_functions(obs: Observer, loaded: Any) -> None:
    """A SavedModel's signatures and restored functions: calling one is an inference."""
    for function in getattr(loaded, "signatures", {}).values():
        obs.loaded_fns.add(id(function))
    for name in ("__call__", "serve", "call", "predict"):
        function = getattr(loaded, name, None)
        if function is not None and hasattr(function, "get_concrete_function"):
            obs.loaded_fns.add(id(function))


def _iterator_made(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def init(self: Any, *args: Any, **kwargs: Any) -> Any:
        first = obs.data_start is None and not obs.reported.get("data") and obs.fn_depth == 0
        start = time.time()
        result = original(self, *args, **kwargs)
        if first:
            obs.data_start, obs.data_open, obs.data_made = start, True, time.time()
        return result

    return init


def _element_taken(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def _next_internal(self: Any) -> Any:
        if not obs.data_open or obs.fn_depth:
            return original(self)
        obs.data_open = False
        try:
            return original(self)
        finally:
            guarded(obs.once)("data", obs.data_start)

    return _next_internal


def _close_data_at_setup(obs: Observer) -> None:
    """The first element will be taken inside a traced function (Keras' fit): data is the
    iterator's set-up, as far as it can be seen."""
    if obs.data_open and obs.data_start is not None:
        obs.data_open = False
        obs.once("data", obs.data_start, obs.data_made)


def _function_call(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if obs.fn_depth or obs.call_depth:
            obs.fn_depth += 1
            try:
                return original(self, *args, **kwargs)
            finally:
                obs.fn_depth -= 1
        guarded(_close_data_at_setup)(obs)
        key, start = id(self), time.time()
        obs.apply_traced = False
        obs.fn_depth += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            obs.fn_depth -= 1
        end = time.time()
        if obs.apply_traced:
            obs.training_fns.add(key)
        if key in obs.training_fns:
            guarded(obs.step_done)(start, end)
        elif key in obs.loaded_fns:
            guarded(obs.call_done)(start, end)
        return result

    return call


def _traced(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def _create_concrete_function(function_type: Any, type_context: Any, func_graph: Any,
                                  tracing_options: Any) -> Any:
        start = time.time()
        try:
            return original(function_type, type_context, func_graph, tracing_options)
        finally:
            key = id(getattr(tracing_options, "python_function", None))
            obs.traces[key] = obs.traces.get(key, 0) + 1
            if obs.traces[key] > 1:
                obs.retraces[0] += 1
                obs.retraces[1] += time.time() - start

    return _create_concrete_function


def _tape_enter(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def enter(self: Any) -> Any:
        if obs.fn_depth == 0 and obs.tape_depth == 0:
            obs.tape_start = time.time()
        obs.tape_depth += 1
        return original(self)

    return enter


def _tape_exit(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def leave(self: Any, *args: Any) -> Any:
        obs.tape_depth = max(0, obs.tape_depth - 1)
        return original(self, *args)

    return leave
