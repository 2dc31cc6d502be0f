"""The observer's hooks into Keras 3: the program's model building, compile, fit and
train_on_batch (the first step begins), calls and predict (inference), loads, and the
optimizer's apply (a step's end). Each hook only reads the clock around the original and
notifies the Observer (observe.py), which holds every rule. Each method is replaced where
Keras defines it (hook_tools.wrap), so `type(model).compile is Trainer.compile` and every
other such comparison reads as without tflaunch."""

import importlib
import sys
import time
from typing import Any, Callable, Optional

from .hook_tools import guarded, wrap
from .tf_hooks import timed


def patch_keras(obs: Any) -> None:
    """Hooks into Keras 3's classes, right after `import keras` finished."""
    try:
        layer = importlib.import_module("keras.src.layers.layer")
        model = importlib.import_module("keras.src.models.model")
        saving = importlib.import_module("keras.src.saving.saving_api")
        optimizer = importlib.import_module("keras.src.optimizers.base_optimizer")
        symbolic = importlib.import_module("keras.src.backend.common.keras_tensor").any_symbolic_tensors
    except Exception:
        return  # not Keras 3: TensorFlow's own hooks still see steps and loads
    eager = _eager_test()
    # A model's constructor builds its layers after Layer.__init__ has returned: the hull of
    # the program's construction ends with the outermost model constructor.
    wrap(layer.Layer, "__init__", lambda original: _layer_made(obs, original))
    for name, cls in (("keras.src.models.sequential", "Sequential"), ("keras.src.models.functional", "Functional")):
        try:
            owner = getattr(importlib.import_module(name), cls)
        except Exception:
            continue
        wrap(owner, "__init__", lambda original: _layer_made(obs, original))
    wrap(layer.Layer, "__call__", lambda original: _model_called(obs, original, model.Model, symbolic, eager))
    # Where each is defined: Trainer (compile), the backend's trainer (fit, predict...), Model.
    wrap(model.Model, "compile", lambda original: timed(obs, "compile", original))
    for name in ("fit", "train_on_batch"):
        wrap(model.Model, name, lambda original: _training(obs, original))
    for name in ("predict", "predict_on_batch"):
        wrap(model.Model, name, lambda original: _inference(obs, original, lambda _m, _a, _k: (True, False)))
    wrap(model.Model, "load_weights", lambda original: timed(obs, "load", original))
    # And the public names bound to it in the modules already loaded (keras.models, keras.saving);
    # one loaded later imports it from saving_api, where it is wrapped already.
    wrap(saving, "load_model", lambda original: timed(obs, "load", original))
    wrap(optimizer.BaseOptimizer, "apply", lambda original: _optimizer_apply(obs, original, eager))


def _eager_test() -> Callable[[], bool]:
    """TensorFlow's own test of eager execution (False while a graph is built, in any thread
    a distribution strategy runs replicas in); always eager where it cannot be asked."""
    context = sys.modules.get("tensorflow.python.eager.context")
    test = getattr(context, "executing_eagerly", None)
    return test if callable(test) else (lambda: True)


def _layer_made(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def init(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.time()
        result = original(self, *args, **kwargs)
        guarded(obs.layer_made)(start, time.time())
        return result

    return init


def _inference(obs: Any, original: Callable[..., Any],
               kind: Callable[[Any, Any, Any], "tuple[bool, bool]"]) -> Callable[..., Any]:
    """A call that `kind` says is (wanted as an inference, made on symbolic tensors)."""

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not guarded(obs.call_possible)():  # nested in something else: no need to look at it
            return original(self, *args, **kwargs)
        found = guarded(kind)(self, args, kwargs)
        wanted, symbolic = found if found else (False, False)
        what: Optional[str] = guarded(obs.call_entered)(wanted, symbolic)
        start = time.time()
        try:
            return original(self, *args, **kwargs)
        finally:
            if what is not None:
                guarded(obs.call_left)(what, start, time.time())

    return call


def _model_called(obs: Any, original: Callable[..., Any], model_class: type,
                  symbolic: Callable[..., bool], eager: Callable[[], bool]) -> Callable[..., Any]:
    """Any layer called: a model called on real tensors is an inference unless training=True
    says it trains; a call on symbolic tensors (Keras Inputs, a graph being built) is build."""

    def kind(layer: Any, args: Any, kwargs: Any) -> "tuple[bool, bool]":
        is_symbolic = not eager() or symbolic(args, kwargs)
        return isinstance(layer, model_class) and kwargs.get("training") is not True, is_symbolic

    return _inference(obs, original, kind)


def _training(obs: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def train(self: Any, *args: Any, **kwargs: Any) -> Any:
        guarded(obs.training_entered)()
        try:
            return original(self, *args, **kwargs)
        finally:
            guarded(obs.training_left)()

    return train


def _optimizer_apply(obs: Any, original: Callable[..., Any], eager: Callable[[], bool]) -> Callable[..., Any]:
    def apply(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.time()
        result = original(self, *args, **kwargs)
        guarded(obs.optimizer_applied)(id(self), start, time.time(), bool(guarded(eager)()))
        return result

    return apply
