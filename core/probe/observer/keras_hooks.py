"""The observer's hooks into Keras, any generation (keras_frameworks.py says which is loaded and
resolves its classes): the program's model building, compile, fit and train_on_batch (the
first step begins), calls, predict and evaluate (inference), loads, and the optimizer's apply
(a step's end). Each hook only reads the clock around the original and notifies the Observer
(observe.py), which holds every rule. Each method is replaced where Keras defines it
(hook_tools.wrap), so `type(model).compile is Trainer.compile` and every other such
comparison reads as without tflaunch."""

import sys
import time
from typing import Any, Callable, Optional

from .hook_tools import guarded, wrap
from .keras_frameworks import Keras, any_symbolic
from .tf_hooks import timed

# What a Keras model does that is an inference when the program does it outside training.
_INFERENCES = ("predict", "predict_on_batch", "evaluate", "test_on_batch")


def patch_keras(obs: Any, keras: Keras) -> None:
    """Hooks into one Keras' classes, once its import has finished."""
    eager = _eager_test()
    # A model's constructor builds its layers after Layer.__init__ has returned: the hull of
    # the program's construction ends with the outermost model constructor.
    for owner in (keras.layer,) + keras.constructors:
        wrap(owner, "__init__", lambda original: _layer_made(obs, original))
    symbolic = keras.symbolic if callable(keras.symbolic) else any_symbolic
    wrap(keras.layer, "__call__", lambda original: _model_called(obs, original, keras.model, symbolic, eager))
    # Where each is defined: Trainer or Model (compile), the backend's trainer (fit, predict...).
    wrap(keras.model, "compile", lambda original: timed(obs, "compile", original))
    for name in ("fit", "train_on_batch"):
        wrap(keras.model, name, lambda original: _training(obs, original))
    for name in _INFERENCES:
        wrap(keras.model, name, lambda original: _inference(obs, original, lambda _m, _a, _k: (True, False)))
    wrap(keras.model, "load_weights", lambda original: timed(obs, "load", original))
    # And the public names bound to it in the modules already loaded (keras.models, keras.saving);
    # one loaded later imports it from its home module, where it is wrapped already.
    home = sys.modules.get(getattr(keras.load_model, "__module__", ""))
    if home is not None:
        wrap(home, keras.load_model.__name__, lambda original: timed(obs, "load", original))
    for optimizer in keras.optimizers:
        wrap(optimizer, keras.apply, lambda original: _optimizer_apply(obs, original, eager))


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
