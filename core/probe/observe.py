"""The program observer: what a user's own program does as it starts, phase by phase.

The launch hook (settings/launch_hook/sitecustomize.py) installs this in a program that
tflaunch measures. It reports, on a pipe of its own (never the program's stdout or stderr),
the phases the program really goes through, in the order they happen, with the events of
the probe's protocol (tflaunch.core.run.events):

- spawn: interpreter start to the hook's first line.
- import: the first top-level `import tensorflow` or `import keras`, whole.
- devices: the first initialisation of TensorFlow's context (devices found and set up).
- load: the first keras.models.load_model, tf.saved_model.load, Checkpoint restore/read or
  Model.load_weights.
- build: the program's own model building: from its first Keras layer to the last layer or
  model constructed before it moves on (compile, fit, a call, a load).
- compile: the first Model.compile.
- data: the first tf.data iterator: its creation and, when the program takes it eagerly
  (a custom loop), its first element. Keras' fit takes elements inside its traced train
  function, where they cannot be told from the step: there, data is the iterator's set-up.
- first_step: the first training step, to its end: the outermost tf.function call in which
  an optimizer's apply was traced (fit, train_on_batch, a @tf.function custom loop), or an
  eager optimizer apply (from the GradientTape that began the step).
- first: the first inference outside training: a Keras model called eagerly, predict,
  predict_on_batch, or a function of a loaded SavedModel (its signatures).
- steady: the next N steps (or calls, for first inference): median, p90, min, max.
- retraces: tf.function traces beyond each function's first (count and time).
- marks: the program's own points and spans (tflaunch_mark.mark).

Each phase is reported once, at the first time it happens. Only the process that was
launched reports: a forked data worker inherits the patches, not the channel. Standard
library only, and every hook is wrapped so that a failure in it never reaches the program.
"""

import atexit
import functools
import json
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

PROTOCOL_VERSION = 1
# Phases of the program's start that count to its ready point; reported once each.
_ONCE = ("import", "devices", "load", "build", "compile", "data", "first_step", "first")
_PROGRESS_EVERY_S = 0.2
# After --until mark:NAME, how long to wait for a step or call before steady state is given up.
STEADY_WAIT_S = 3.0


def _memory() -> Tuple[Optional[int], Optional[int]]:
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if line.startswith(("VmRSS", "VmHWM")))
        return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024
    except (OSError, ValueError, KeyError):
        return None, None


class Observer:
    def __init__(self, fd: int, until: str = "first_step", steady: int = 20) -> None:
        self.fd, self.until, self.steady_n = fd, until, max(0, int(steady))
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.reported: Dict[str, bool] = {}
        self.last_phase = "spawn"
        # Where the program is: nesting of tf.function calls, loads, tapes, inference calls.
        self.fn_depth = 0
        self.load_depth = 0
        self.tape_depth = 0
        self.call_depth = 0
        self.apply_traced = False  # an optimizer apply was traced in the current outermost call
        self.training_fns: set[int] = set()
        self.loaded_fns: set[int] = set()
        self.tape_start: Optional[float] = None
        self.fit_start: Optional[float] = None  # Keras' fit or train_on_batch entered: the first step began
        self.training_depth = 0  # inside fit or train_on_batch
        self.last_end: Optional[float] = None  # the end of the last step or call counted
        self.step_optimizer: Optional[int] = None  # an eager loop's steps end at this optimizer's apply
        self.build: Optional[List[float]] = None  # [first layer's start, last construction's end]
        self.data_start: Optional[float] = None
        self.data_open = False  # iterator made, first eager element not yet taken
        self.data_made = 0.0  # when the first iterator was made
        # Steady state: after the ready point, the next steps (or calls).
        self.ready_kind: Optional[str] = None  # "step" or "call", once ready
        self.steady: List[float] = []
        self.steady_start: Optional[float] = None
        self.steady_done = False
        self.last_progress = 0.0
        self.traces: Dict[int, int] = {}
        self.retraces = [0, 0.0]

    # -- the channel ---------------------------------------------------------------------
    def send(self, event: str, phase: str, **fields: Any) -> None:
        if os.getpid() != self.owner:
            return  # a forked worker: the launched process alone reports
        line = json.dumps({"v": PROTOCOL_VERSION, "ts": time.time(), "phase": phase, "event": event, **fields},
                          default=str) + "\n"
        with self.lock:
            try:
                os.write(self.fd, line.encode("utf-8"))
            except OSError:
                pass  # tflaunch is gone: the program goes on without it

    def span(self, name: str, start: float, end: float, **fields: Any) -> None:
        """A phase that ran from `start` to `end` (wall clock), reported at its end."""
        rss, peak = _memory()
        self.send("phase_end", name, duration=max(0.0, end - start), rss=rss, peak_rss=peak, **fields)
        self.last_phase = name

    def once(self, name: str, start: float, end: Optional[float] = None, **fields: Any) -> None:
        if self.reported.get(name):
            return
        self.reported[name] = True
        if name in ("compile", "first_step", "first", "load", "data"):
            self.close_build()
        self.span(name, start, time.time() if end is None else end, **fields)

    # -- build: the hull of the program's own layer and model constructions ---------------
    def layer_made(self, start: float, end: float) -> None:
        if self.reported.get("build") or self.load_depth or self.fn_depth or self.call_depth:
            return
        if self.build is None:
            self.build = [start, end]
        else:
            self.build[1] = end

    def close_build(self) -> None:
        if self.build is not None and not self.reported.get("build"):
            self.reported["build"] = True
            self.span("build", self.build[0], self.build[1])

    # -- steps and calls -------------------------------------------------------------------
    # Steady state is the program's own rhythm: the time from one step's (or call's) end to
    # the next's, the input pipeline and the loop's Python included, as its own clock has it.
    def training_entered(self) -> None:
        """fit or train_on_batch began: the first step is running (its data and tracing too)."""
        if self.fit_start is None and not self.reported.get("first_step"):
            self.close_build()
            self.fit_start = time.time()
            self.send("phase_start", "first_step")

    def step_done(self, start: float, end: float) -> None:
        if not self.reported.get("first_step"):
            self.once("first_step", min(start, self.fit_start or start), end)
            self.at_ready_point("first_step", "step", end)
        elif self.ready_kind in ("step", "any"):
            self.ready_kind = "step"
            self.steady_add(end)

    def call_done(self, start: float, end: float) -> None:
        if self.training_depth:
            return  # inside fit or train_on_batch (a strategy's replica calls): training, not inference
        if not self.reported.get("first"):
            self.once("first", start, end)
            self.at_ready_point("first_inference", "call", end)
        elif self.ready_kind in ("call", "any"):
            self.ready_kind = "call"
            self.steady_add(end)

    def at_ready_point(self, point: str, kind: str, end: float) -> None:
        if self.ready_kind is None and self.until in (point, "exit"):
            self.ready_kind, self.last_end = kind, end
            if self.steady_n == 0:
                self.finish_steady()
            else:
                self.send("phase_start", "steady")

    def marked(self, name: str) -> None:
        """The program's mark: at --until mark:NAME, steady state is its next steps or calls,
        whichever it makes; a program that makes none within STEADY_WAIT_S is measured as is."""
        if self.ready_kind is None and self.until == f"mark:{name}":
            self.ready_kind, self.last_end = "any", time.time()
            if self.steady_n == 0:
                self.finish_steady()
                return
            self.send("phase_start", "steady")
            timer = threading.Timer(STEADY_WAIT_S, self._no_steps_after_mark)
            timer.daemon = True
            timer.start()

    def _no_steps_after_mark(self) -> None:
        with self.lock:
            idle = not self.steady and not self.steady_done
        if idle:
            self.finish_steady()

    def steady_add(self, end: float) -> None:
        if self.steady_done:
            return
        if self.steady_start is None:
            self.steady_start = self.last_end
        self.steady.append(end - (self.last_end if self.last_end is not None else end))
        self.last_end = end
        now = time.time()
        if len(self.steady) >= self.steady_n:
            self.finish_steady()
        elif now - self.last_progress > _PROGRESS_EVERY_S:
            self.last_progress = now
            self.send("progress", "steady", done=len(self.steady), total=self.steady_n)

    def finish_steady(self) -> None:
        """Steady state measured (or cut short at exit): retraces first, then steady, whose
        end is what tflaunch waits for before it stops the program. No step or call after
        the ready point: a steady end with n = 0, which is no phase (never a zero row)."""
        if self.steady_done:
            return
        self.steady_done = True
        self.send_retraces()
        values = sorted(self.steady)
        latency: Dict[str, float] = {"n": len(values)}
        if values:
            import statistics  # here, not at start-up: the program's own start pays for nothing it need not

            latency.update(median=statistics.median(values), min=values[0], max=values[-1],
                           mean=statistics.fmean(values), p90=values[min(len(values) - 1, int(0.9 * len(values)))])
        start = self.steady_start if self.steady_start is not None else time.time()
        self.span("steady", start, time.time() if values else start, latency=latency)

    def send_retraces(self) -> None:
        if self.retraces[0] and not self.reported.get("retraces"):
            self.reported["retraces"] = True
            self.send("phase_end", "retraces", duration=self.retraces[1], count=self.retraces[0], rss=None,
                      peak_rss=None)

    def at_exit(self) -> None:
        self.close_build()
        if self.ready_kind is not None:
            self.finish_steady()
        self.send_retraces()

    # -- marks --------------------------------------------------------------------------
    def mark(self, name: str) -> None:
        self.send("mark", self.last_phase, name=name)
        self.marked(name)

    def mark_span(self, name: str, start: float, end: float) -> None:
        self.span(name, start, end)


def _guarded(hook: Callable[..., Any]) -> Callable[..., Any]:
    """A hook that can fail without the program noticing."""

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return hook(*args, **kwargs)
        except Exception:
            return None

    return run


def _wrap(owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Replace owner.name by make(original), keeping its name and docstring."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "__tflaunch__", False):
        return
    wrapper = functools.wraps(original)(make(original))
    wrapper.__tflaunch__ = True  # type: ignore[attr-defined]
    import inspect  # loaded by TensorFlow already: nothing added to the program's start

    try:  # Keras reads constructors' arguments with getfullargspec, which ignores __wrapped__
        wrapper.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    setattr(owner, name, wrapper)


def _timed_once(obs: Observer, phase: str, depth: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A wrapper that reports the first outermost call of a function as `phase`."""

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if obs.reported.get(phase) or (depth and getattr(obs, depth)):
                if depth:
                    setattr(obs, depth, getattr(obs, depth) + 1)
                    try:
                        return original(*args, **kwargs)
                    finally:
                        setattr(obs, depth, getattr(obs, depth) - 1)
                return original(*args, **kwargs)
            _guarded(obs.close_build)()
            start = time.time()
            if depth:
                setattr(obs, depth, getattr(obs, depth) + 1)
            try:
                return original(*args, **kwargs)
            finally:
                if depth:
                    setattr(obs, depth, getattr(obs, depth) - 1)
                _guarded(obs.once)(phase, start)

        return wrapper

    return make


# -- TensorFlow ----------------------------------------------------------------------------
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
        _wrap(context.Context, "ensure_initialized", lambda original: _devices(obs, original, context.Context))
    saved = module("tensorflow.python.saved_model.load")
    api = module("tensorflow._api.v2.saved_model")
    if saved is not None:
        _wrap(saved, "load", lambda original: _saved_model_load(obs, original))
        if api is not None and hasattr(api, "load"):
            api.load = saved.load
    checkpoint = module("tensorflow.python.checkpoint.checkpoint")
    if checkpoint is not None:
        for name in ("restore", "read"):
            _wrap(checkpoint.Checkpoint, name, _timed_once(obs, "load", "load_depth"))
    iterators = module("tensorflow.python.data.ops.iterator_ops")
    if iterators is not None:
        _wrap(iterators.OwnedIterator, "__init__", lambda original: _iterator_made(obs, original))
        _wrap(iterators.OwnedIterator, "_next_internal", lambda original: _element_taken(obs, original))
    functions = module("tensorflow.python.eager.polymorphic_function.polymorphic_function")
    if functions is not None:
        _wrap(functions.Function, "__call__", lambda original: _function_call(obs, original))
    concrete = module("tensorflow.python.eager.polymorphic_function.concrete_function")
    if concrete is not None:
        _wrap(concrete.ConcreteFunction, "__call__", lambda original: _function_call(obs, original))
    tracing = module("tensorflow.python.eager.polymorphic_function.tracing_compilation")
    if tracing is not None:
        _wrap(tracing, "_create_concrete_function", lambda original: _traced(obs, original))
    backprop = module("tensorflow.python.eager.backprop")
    if backprop is not None:
        _wrap(backprop.GradientTape, "__enter__", lambda original: _tape_enter(obs, original))
        _wrap(backprop.GradientTape, "__exit__", lambda original: _tape_exit(obs, original))


def _devices(obs: Observer, original: Callable[..., Any], owner: type) -> Callable[..., Any]:
    def ensure_initialized(self: Any) -> Any:
        if obs.reported.get("devices") or getattr(self, "_initialized", True):
            return original(self)
        start = time.time()
        try:
            return original(self)
        finally:
            _guarded(obs.once)("devices", start)
            # Every eager op asks: once the devices are up, the hook steps out of the way.
            setattr(owner, "ensure_initialized", original)  # noqa: B010

    return ensure_initialized


def _saved_model_load(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    timed = _timed_once(obs, "load", "load_depth")(original)

    def load(*args: Any, **kwargs: Any) -> Any:
        loaded = timed(*args, **kwargs)
        _guarded(_remember_functions)(obs, loaded)
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
            _guarded(obs.once)("data", obs.data_start)

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
        _guarded(_close_data_at_setup)(obs)
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
            _guarded(obs.step_done)(start, end)
        elif key in obs.loaded_fns:
            _guarded(obs.call_done)(start, end)
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


# -- Keras -------------------------------------------------------------------------------------
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
    _wrap(layer.Layer, "__init__", lambda original: _layer_made(obs, original))
    for name, cls in (("keras.src.models.sequential", "Sequential"), ("keras.src.models.functional", "Functional")):
        try:
            _wrap(getattr(importlib.import_module(name), cls), "__init__", lambda original: _layer_made(obs, original))
        except Exception:
            continue
    _wrap(layer.Layer, "__call__", lambda original: _model_called(obs, original, model.Model))
    # On Model itself: the backend's trainer (TensorFlowTrainer) overrides Trainer's methods.
    _wrap(model.Model, "compile", _timed_once(obs, "compile"))
    for name in ("fit", "train_on_batch"):
        _wrap(model.Model, name, lambda original: _training(obs, original))
    for name in ("predict", "predict_on_batch"):
        _wrap(model.Model, name, lambda original: _predicted(obs, original))
    _wrap(model.Model, "load_weights", _timed_once(obs, "load", "load_depth"))
    _wrap(saving, "load_model", _timed_once(obs, "load", "load_depth"))
    # The public names bound to it, in the modules already loaded: importing one here (tf.keras's
    # tree, 50 ms) would be work the program never asked for.
    for api in ("keras.models", "keras.saving", "keras._tf_keras.keras.models"):
        loaded = sys.modules.get(api)
        if loaded is not None and hasattr(loaded, "load_model"):
            setattr(loaded, "load_model", saving.load_model)  # noqa: B010
    _wrap(optimizer.BaseOptimizer, "apply", lambda original: _optimizer_apply(obs, original))


def _layer_made(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def init(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.time()
        result = original(self, *args, **kwargs)
        _guarded(obs.layer_made)(start, time.time())
        return result

    return init


def _model_called(obs: Observer, original: Callable[..., Any], model_class: type) -> Callable[..., Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if obs.fn_depth or obs.call_depth or obs.tape_depth or obs.training_depth or kwargs.get("training") is True \
                or not isinstance(self, model_class):
            return original(self, *args, **kwargs)
        _guarded(obs.close_build)()
        start = time.time()
        obs.call_depth += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            obs.call_depth -= 1
        _guarded(obs.call_done)(start, time.time())
        return result

    return call


def _training(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def train(self: Any, *args: Any, **kwargs: Any) -> Any:
        if obs.fn_depth == 0 and obs.call_depth == 0:
            _guarded(obs.training_entered)()
        obs.training_depth += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            obs.training_depth -= 1

    return train


def _predicted(obs: Observer, original: Callable[..., Any]) -> Callable[..., Any]:
    def predict(self: Any, *args: Any, **kwargs: Any) -> Any:
        if obs.fn_depth or obs.call_depth:
            return original(self, *args, **kwargs)
        _guarded(obs.close_build)()
        start = time.time()
        obs.call_depth += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            obs.call_depth -= 1
        _guarded(obs.call_done)(start, time.time())
        return result

    return predict


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
            _guarded(obs.step_done)(start, time.time())
        return result

    return apply


# -- installation ----------------------------------------------------------------------------
_OBSERVER: Optional[Observer] = None


def observer() -> Optional[Observer]:
    return _OBSERVER


def install(fd: int, settings: Dict[str, Any], process_age: Optional[float]) -> Observer:
    """Start observing this process: hello and spawn now, the rest as it happens."""
    global _OBSERVER
    os.set_inheritable(fd, False)  # a program's own subprocesses never get the channel
    obs = _OBSERVER = Observer(fd, str(settings.get("until", "first_step")), int(settings.get("steady", 20)))
    obs.send("hello", "spawn", pid=os.getpid(), process_age=process_age, python=sys.version.split()[0])
    if process_age is not None:
        obs.span("spawn", time.time() - max(process_age, 0.0), time.time())
    atexit.register(_guarded(obs.at_exit))
    return obs


def import_began(obs: Observer) -> None:
    """The first `import tensorflow` or `import keras` has begun: the import phase runs."""
    if not obs.reported.get("import"):
        obs.send("phase_start", "import")


def warm_start(obs: Observer) -> None:
    """In a child forked from a warm server: TensorFlow and Keras were imported before the
    launch, so their hooks go in now and there is no import phase to report."""
    obs.send("mark", "spawn", name="warm_start")
    if "tensorflow" in sys.modules:
        patch_tensorflow(obs)
    if "keras.src.layers.layer" in sys.modules:
        patch_keras(obs)
    _send_versions(obs)


def imported(obs: Observer, name: str, start: float, outermost: bool) -> None:
    """`import NAME` (tensorflow or keras) has just finished; `outermost` when no other of
    the two was being imported around it (keras imports tensorflow inside its own import)."""
    if outermost:
        obs.once("import", start)
    if name == "tensorflow":
        patch_tensorflow(obs)
        if "keras.src.layers.layer" in sys.modules:
            patch_keras(obs)
    elif name == "keras":
        patch_keras(obs)
    if outermost:  # not inside another's import: a module being imported may resolve names lazily
        _send_versions(obs)


def _send_versions(obs: Observer) -> None:
    versions = {}
    for module in ("tensorflow", "keras"):
        # From the module's own dictionary: getattr on a module with a lazy __getattr__
        # (keras, tf.keras) can import whole trees the program never asked for.
        version = getattr(sys.modules.get(module), "__dict__", {}).get("__version__")
        if version:
            versions[module] = str(version)
    if versions:
        obs.send("result", obs.last_phase, environment={"python": sys.version.split()[0], "cores": os.cpu_count(),
                                                         **versions}, model={})
