"""The observer's hooks into Keras 3: the program's model building, compile, fit and
train_on_batch (the first step begins), calls and predict (inference), loads, and the
optimizer's apply (a step's end)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Dict

from .hook_tools import guarded, timed_once, wrap

if TYPE_CHECKING:
    from .observe import Observer


def patch_keras(obs: Observer) -> None:
    """Hooks into Keras 3's classes, right after `import keras` finished."""
    import importlib

    try:
        layer = importlib.import_module("keras.src.layers.layer")
        model = importlib.import_module("keras.src.models.model")
        saving = importlib.import_module("keras.src.saving.saving_api")
        optimizer = importlib.import_module("keras.src.optimizers.base_optimizer")
    except Exception:
        return  # not Keras 3: TensorFlow's own hooks still see steps and loads
    # A model's constructor builds its layers after Layer.__init__ has returned: the hull of
    # the program's construction ends with the outermost model constructor.
    wrap(layer.Layer, "__init__", lambda original: _layer_made(obs, original))
    for name, cls in (("keras.src.models.sequential", "Sequential"), ("keras.src.models.functional", "Functional")):
        try:
            wrap(getattr(importlib.import_module(name), cls), "__init__", lambda original: _layer_made(obs, original))
        except Exception:
            continue
    wrap(layer.Layer, "__call__", lambda original: _model_called(obs, original, model.Model))
    # On Model itself: the backend's trainer (TensorFlowTrainer) overrides Trainer's methods.
    wrap(model.Model, "compile", timed_once(obs, "compile"))
    for name in ("fit", "train_on_batch"):
        wrap(model.Model, name, lambda original: _training(obs, original))
    for name in ("predict", "predict_on_batch"):
        wrap(model.Model, name, lambda original: _predicted(obs, original))
    wrap(model.Model, "load_weights", timed_once(obs, "load", "load_depth"))
    wrap(saving, "load_model", timed_once(obs, "load", "load_depth"))
    # The public names bound to it, in the modules already loaded: importing one here (tf.keras's
    # tree, 50 ms) would be work the program never asked for.
    for api in ("keras.models", "keras.saving", "keras._tf_keras.keras.models"):
        loaded = sys.modules.get(api)
        if loaded is not None and hasattr(loaded, "load_model"):
            setattr(loaded, "load_model", saving.load_model)  # noqa: B010
    wrap(optimizer.BaseOptimizer, "apply", lambda original: _optimizer_apply(obs, original))


def _layer_made(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def init(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.time()
        result = original(self, *args, **kwargs)
        guarded(obs.layer_made)(start, time.time())
        return result

    return init


def _inference(obs: Observer, original: Callable[..., Any],
               wanted: Callable[[Any, Dict[str, Any]], bool]) -> Callable[..., Any]:
    """An outermost call that `wanted` says is an inference: timed, and the first reported."""
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if obs.fn_depth or obs.call_depth or not wanted(self, kwargs):
            return original(self, *args, **kwargs)
        guarded(obs.close_build)()
        start = time.time()
        obs.call_depth += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            obs.call_depth -= 1
        guarded(obs.call_done)(start, time.time())
        return result

    return call


def _model_called(obs: Observer, original: Callable[..., Any], model_class: type) -> Callable[..., Any]:
    """A model called as a function: an inference unless a tape, fit or training=True says it trains."""
    return _inference(obs, original, lambda model, kwargs: not (
        obs.tape_depth or obs.training_depth or kwargs.get("training") is True) and isinstance(model, model_class))


def _training(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def train(self: Any, *args: Any, **kwargs: Any) -> Any:
        if obs.fn_depth == 0 and obs.call_depth == 0:
            guarded(obs.training_entered)()
        obs.training_depth += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            obs.training_depth -= 1

    return train


def _predicted(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    return _inference(obs, original, lambda _model, _kwargs: True)


def _optimizer_apply(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def apply(self: Any, *args: Any, **kwargs: Any) -> Any:
        if obs.fn_depth:
            obs.apply_traced = True  # inside a traced function: its outermost call is the step
            return original(self, *args, **kwargs)
        start = obs.tape_start if obs.tape_start is not None else time.time()
        result = original(self, *args, **kwargs)
        if obs.step_optimizer is None:
            obs.step_optimizer = id(self)
        if id(self) == obs.step_optimizer:  # two optimizers (a GAN) take one step together
            obs.tape_start = None
            guarded(obs.step_done)(start, time.time())
        return result

    return apply
