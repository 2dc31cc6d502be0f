"""The observer's hooks into Keras, any generation (keras_frameworks.py says which is loaded and
resolves its classes): the program's model building, compile, fit and train_on_batch (the
first step begins), calls, predict and evaluate (inference), loads, the optimizer's apply
(a step's end) and the batch edges fit tells its callbacks (where a step of fit ends). Each
hook is a start and an end around the original call: it only reads the clock and notifies
the Observer (observe.py), which holds every rule. On Python 3.12+ nothing is replaced
(sys.monitoring watches the method); before, each method is replaced where Keras defines it
(hook_tools.wrap), so `type(model).compile is Trainer.compile` and every other such
comparison reads as without tflaunch."""

import sys
import time
from typing import Any, Callable

from .hook_tools import Args, Hook, Kwargs, hook
from .keras_frameworks import Keras, any_symbolic
from .tf_hooks import made, timed

# What a Keras model does that is an inference when the program does it outside training.
_INFERENCES = ("predict", "predict_on_batch", "evaluate", "test_on_batch")


def patch_keras(obs: Any, keras: Keras) -> None:
    """Hooks into one Keras' classes, once its import has finished."""
    eager = _eager_test()
    # A model's constructor builds its layers after Layer.__init__ has returned: the hull of
    # the program's construction ends with the outermost model constructor.
    for owner in (keras.layer,) + keras.constructors:
        hook(owner, "__init__", *made(obs.layer_made), arguments=False)
    symbolic = keras.symbolic if callable(keras.symbolic) else any_symbolic
    hook(keras.layer, "__call__", *_model_called(obs, keras.model, symbolic, eager))
    # Where each is defined: Trainer or Model (compile), the backend's trainer (fit, predict...).
    hook(keras.model, "compile", *timed(obs, "compile"), arguments=False)
    for name in ("fit", "train_on_batch"):
        hook(keras.model, name, *_training(obs), arguments=False)
    for name in _INFERENCES:
        hook(keras.model, name, *_inference(obs, lambda _a, _k: (True, False)), arguments=False)
    hook(keras.model, "load_weights", *timed(obs, "load"), arguments=False)
    # And the public names bound to it in the modules already loaded (keras.models, keras.saving);
    # one loaded later imports it from its home module, where it is hooked already.
    home = sys.modules.get(getattr(keras.load_model, "__module__", ""))
    if home is not None:
        hook(home, keras.load_model.__name__, *timed(obs, "load"), arguments=False)
    for optimizer in keras.optimizers:
        hook(optimizer, keras.apply, *_optimizer_apply(obs, eager))
    # fit's batch edges, which every generation tells its callbacks around each train function call.
    if keras.callbacks is not None:
        hook(keras.callbacks, "on_train_batch_begin", lambda _args, _kwargs: obs.batch_began(), arguments=False)
        hook(keras.callbacks, "on_train_batch_end", lambda _args, _kwargs: obs.batch_ended(time.time()),
             arguments=False)


def _eager_test() -> Callable[[], bool]:
    """TensorFlow's own test of eager execution (False while a graph is built, in any thread
    a distribution strategy runs replicas in); always eager where it cannot be asked."""
    context = sys.modules.get("tensorflow.python.eager.context")
    test = getattr(context, "executing_eagerly", None)
    return test if callable(test) else (lambda: True)


def _inference(obs: Any, kind: Callable[[Args, Kwargs], "tuple[bool, bool]"]) -> Hook:
    """A call that `kind` says is (wanted as an inference, made on symbolic tensors)."""

    def start(args: Args, kwargs: Kwargs) -> Any:
        if not obs.call_possible():  # nested in something else: no need to look at it
            return None
        wanted, symbolic = kind(args, kwargs)
        what = obs.call_entered(wanted, symbolic)
        return None if what is None else (what, time.time())

    def end(state: Any, _result: Any, _raised: bool) -> None:
        obs.call_left(state[0], state[1], time.time())

    return start, end


def _model_called(obs: Any, model_class: type, symbolic: Callable[..., bool], eager: Callable[[], bool]) -> Hook:
    """Any layer called: a model called on real tensors is an inference unless training=True
    says it trains; a call on symbolic tensors (Keras Inputs, a graph being built) is build."""

    def kind(args: Args, kwargs: Kwargs) -> "tuple[bool, bool]":
        layer, inputs = args[0], args[1:]
        is_symbolic = not eager() or symbolic(inputs, kwargs)
        return isinstance(layer, model_class) and kwargs.get("training") is not True, is_symbolic

    return _inference(obs, kind)


def _training(obs: Any) -> Hook:
    def start(_args: Args, _kwargs: Kwargs) -> Any:
        obs.training_entered()
        return True

    return start, lambda _state, _result, _raised: obs.training_left()


def _optimizer_apply(obs: Any, eager: Callable[[], bool]) -> Hook:
    def end(state: Any, _result: Any, raised: bool) -> None:
        if not raised:
            obs.optimizer_applied(id(state[0]), state[1], time.time(), bool(eager()))

    return (lambda args, _kwargs: (args[0], time.time())), end
