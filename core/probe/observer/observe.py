"""The program observer's rules: what a user's own program does as it starts, phase by phase.

Every rule lives here (h11's `_state.py`, Rule 1): the hooks (tf_hooks.py, keras_hooks.py)
only wrap TensorFlow's and Keras' functions and notify the Observer of what happened, with
the times they read; the Observer decides what a phase, a step, an inference, data and build
are, and writes the probe's protocol events (tflaunch.core.run.events) on a pipe of its own.
Tests feed it notifications with a fake clock (tests/test_observer_rules.py).

- spawn: interpreter start to the hook's first line.
- import: the first top-level `import tensorflow` or `import keras`, whole.
- devices: the first initialisation of TensorFlow's context (devices found and set up).
- load: the first outermost keras.models.load_model, tf.saved_model.load, Checkpoint
  restore/read or Model.load_weights (a compile inside a load is the load's).
- build: the program's own model building: the hull of its layer and model constructions,
  symbolic calls included (a Sequential applied to a Keras `Input`), from the first to the
  last before the first step or inference. Other phases between do not close it.
- compile: the first Model.compile outside a load.
- data: the first tf.data iterator: its creation and, when the program takes it eagerly
  (a custom loop), its first element. Keras' fit takes elements inside its traced train
  function, where they cannot be told from the step: there, data is the iterator's set-up.
- first_step: the first training step, to its end: the outermost tf.function call in which
  an optimizer's apply was traced (fit, train_on_batch, a @tf.function custom loop), or an
  eager optimizer apply (from the GradientTape that began the step). In a batch of fit, it
  ends where Keras hands the batch's logs to the callbacks (the program's on_train_batch_end
  sees it there: after Keras 3 reads the train function's outputs, before any callback runs);
  a batch whose end is never told ends at its own function's end.
- first: the first inference outside training: a Keras model called eagerly on real tensors,
  predict, predict_on_batch, evaluate, test_on_batch, a function of a loaded SavedModel, or
  the program's own tf.function called on real inputs outside a tape (one that traced no
  optimizer apply: a serving or evaluation function). A call on symbolic tensors (a model
  being constructed) is build, never an inference.
- steady: the next N steps (or calls, for first inference): median, p90, min, max.
- retraces: tf.function traces beyond each function's first (count and time).
- marks: the program's own points and spans (tflaunch_mark.mark).
- what cannot be observed (a Keras on another backend, one tflaunch does not know) is said at
  its import: with --until first_step or first_inference the run is refused there, before the
  program runs on (the user is told to measure to the exit or to a mark of their own);
  otherwise it is noted and the run goes on.

Each phase is reported once, with its own start and end as the program's clock read them
(never the time of the report). Nesting (inside a tf.function, a load, a model call, a tape)
is counted per thread: a data thread's call is not nested in the main thread's. Training
(inside fit) is the whole process's: a distribution strategy's replica threads train too.
Only the process that was launched reports: a forked data worker inherits the hooks, not
the channel. Standard library only, Python 3.8.
"""

import os
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..channel import line
from ..process import status_memory

_PROGRESS_EVERY_S = 0.2
# After --until mark:NAME, how long to wait for a step or call before steady state is given up.
STEADY_WAIT_S = 3.0
# Phases that end the program's construction: build is closed (and reported) by these alone.
_READY_SIDE = ("first_step", "first")
# The --until points that need the observer to see a step or an inference.
_SEEN_POINTS = ("first_step", "first_inference")
# The status a program refused at its import exits with (tflaunch reports the reason itself).
REFUSED_EXIT = 3


class _Nesting(threading.local):
    """Where one thread is: inside how many tf.function calls, loads, inference calls, tapes."""

    def __init__(self) -> None:
        self.fn = 0
        self.load = 0
        self.call = 0
        self.tape = 0
        self.tape_start: Optional[float] = None  # the outermost tape of an eager step began


class Observer:
    def __init__(self, write: Callable[[bytes], None], until: str = "first_step", steady: int = 20,
                 clock: Callable[[], float] = time.time,
                 memory: Callable[[], Tuple[Optional[int], Optional[int]]] = status_memory) -> None:
        self.write, self.until, self.steady_n = write, until, max(0, int(steady))
        self.clock, self.memory = clock, memory
        self.owner = os.getpid()
        self.lock = threading.RLock()
        self.here = _Nesting()
        self.reported: Dict[str, bool] = {}
        self.last_phase = "spawn"
        self.before_stop: Callable[[], None] = lambda: None  # tflaunch ends the program after steady
        # The first step or first inference has ended (phase, start, end): its anatomy is taken here.
        self.first_done: Callable[[str, float, float], None] = lambda phase, start, end: None
        # The ready point is reached, once (the exit, under --until exit): what watching cost is told there.
        self.ready: Callable[[], None] = lambda: None
        self.training = 0  # inside fit or train_on_batch, in any thread
        self.apply_traced = False  # an optimizer apply was traced in the current outermost call
        self.tape_traced = False  # a gradient tape was traced in it
        self.training_fns: Set[int] = set()
        self.gradient_fns: Set[int] = set()  # functions that take gradients: never an inference
        self.loaded_fns: Set[int] = set()
        self.fit_start: Optional[float] = None  # fit or train_on_batch entered: the first step began
        self.batch_open = False  # fit's callbacks were told a batch began, and not yet its end
        self.batch_step: Optional[Tuple[float, float]] = None  # that batch's step (start, end), to end at its edge
        self.step_optimizer: Optional[int] = None  # an eager loop's steps end at this optimizer's apply
        self.build: Optional[List[float]] = None  # [first construction's start, last one's end]
        self.data_start: Optional[float] = None
        self.data_open = False  # iterator made, first eager element not yet taken
        self.data_made = 0.0  # when the first iterator was made
        # Steady state: after the ready point, the next steps (or calls).
        self.ready_kind: Optional[str] = None  # "step", "call" or "any" (after a mark), once ready
        self.last_end: Optional[float] = None  # the end of the last step or call counted
        self.steady: List[float] = []
        self.steady_start: Optional[float] = None
        self.steady_done = False
        self.last_progress = 0.0
        self.traces: Dict[int, int] = {}
        self.retraces = [0, 0.0]
        self.unobserved: List[str] = []  # why parts of this program cannot be observed
        self.refuse: Callable[[], None] = lambda: os._exit(REFUSED_EXIT)

    # -- the channel ---------------------------------------------------------------------
    def send(self, event: str, phase: str, **fields: Any) -> None:
        if os.getpid() != self.owner:
            return  # a forked worker: the launched process alone reports
        data = line(event, phase, self.clock(), **fields).encode("utf-8")
        with self.lock:
            try:
                self.write(data)
            except OSError:
                pass  # tflaunch is gone: the program goes on without it

    def span(self, name: str, start: float, end: float, **fields: Any) -> None:
        """A phase that ran from `start` to `end` (the program's wall clock)."""
        rss, peak = self.memory()
        self.send("phase_end", name, start=start, duration=max(0.0, end - start), rss=rss, peak_rss=peak, **fields)
        self.last_phase = name

    def once(self, name: str, start: float, end: float, **fields: Any) -> None:
        with self.lock:
            if self.reported.get(name):
                return
            self.reported[name] = True
            if name in _READY_SIDE:
                self.close_build()
            self.span(name, start, end, **fields)

    # -- import, devices, loads and compile ----------------------------------------------
    def import_began(self) -> None:
        if not self.reported.get("import"):
            self.send("phase_start", "import")

    def imported(self, start: float) -> None:
        self.once("import", start, self.clock())

    def devices_ready(self, start: float, end: float) -> None:
        self.once("devices", start, end)

    def timed_entered(self, phase: str) -> bool:
        """A load or compile begins; True when it is the one to report (the first, and
        neither inside a traced function nor inside a load)."""
        here = self.here
        counted = not self.reported.get(phase) and not here.fn and not here.load
        if phase == "load":
            here.load += 1
        return counted

    def timed_left(self, phase: str, counted: bool, start: float, end: float) -> None:
        if phase == "load":
            self.here.load = max(0, self.here.load - 1)
        if counted:
            self.once(phase, start, end)

    # -- build: the hull of the program's own constructions ------------------------------
    def layer_made(self, start: float, end: float) -> None:
        here = self.here
        if self.reported.get("build") or here.load or here.fn or here.call:
            return
        with self.lock:
            if self.build is None:
                self.build = [start, end]
            else:
                self.build[0], self.build[1] = min(self.build[0], start), max(self.build[1], end)

    def close_build(self) -> None:
        with self.lock:
            if self.build is not None and not self.reported.get("build"):
                self.reported["build"] = True
                self.span("build", self.build[0], self.build[1])

    # -- data ------------------------------------------------------------------------------
    def iterator_made(self, start: float, end: float) -> None:
        if self.data_start is None and not self.reported.get("data") and not self.here.fn:
            self.data_start, self.data_open, self.data_made = start, True, end

    def element_wanted(self) -> bool:
        """An element is about to be taken: True when it is the first, taken eagerly."""
        if not self.data_open or self.here.fn:
            return False
        self.data_open = False
        return True

    def element_taken(self, end: float) -> None:
        if self.data_start is not None:
            self.once("data", self.data_start, end)

    def _data_taken_in_function(self) -> None:
        """The first element will be taken inside a traced function (Keras' fit): data is
        the iterator's set-up, as far as it can be seen."""
        if self.data_open and self.data_start is not None:
            self.data_open = False
            self.once("data", self.data_start, self.data_made)

    # -- tf.function calls, tapes, optimizers, traces --------------------------------------
    def function_entered(self) -> bool:
        """A tf.function (or concrete function) is called; True when it is this thread's outermost."""
        here = self.here
        outermost = not here.fn and not here.call
        here.fn += 1
        if outermost:
            self._data_taken_in_function()
            self.apply_traced = self.tape_traced = False
        return outermost

    def function_left(self, key: int, outermost: bool, start: float, end: float, own: bool = False) -> None:
        """An outermost call ends: a step if its function traced an optimizer apply; an
        inference if it is a loaded SavedModel's, or the program's own (`own`) called outside
        a tape (a tape's forward pass is part of a step)."""
        self.here.fn = max(0, self.here.fn - 1)
        if not outermost:
            return
        if self.apply_traced:
            self.training_fns.add(key)
        elif self.tape_traced:
            self.gradient_fns.add(key)
        if key in self.training_fns:
            self.step_ended(start, end)
        elif key in self.loaded_fns or (own and not self.here.tape and key not in self.gradient_fns):
            self.call_done(start, end)

    def loaded_function(self, key: int) -> None:
        """A SavedModel's signature or restored function: calling one is an inference."""
        self.loaded_fns.add(key)

    def tape_entered(self) -> None:
        here = self.here
        if here.fn:
            self.tape_traced = True
        if not here.fn and not here.tape:
            here.tape_start = self.clock()
        here.tape += 1

    def tape_left(self) -> None:
        self.here.tape = max(0, self.here.tape - 1)

    def optimizer_applied(self, key: int, start: float, end: float, eager: bool) -> None:
        """An optimizer's apply ran. Traced (in a tf.function, or in a strategy's replica
        thread while one is traced): its outermost call is the step. Eager: the step ends
        here, at the apply of the program's first optimizer (a GAN's two take one step)."""
        here = self.here
        if here.fn or not eager:
            self.apply_traced = True
            return
        if self.step_optimizer is None:
            self.step_optimizer = key
        if key == self.step_optimizer:
            step_start = here.tape_start if here.tape_start is not None else start
            here.tape_start = None
            self.step_ended(step_start, end)

    def traced(self, key: int, seconds: float) -> None:
        with self.lock:
            self.traces[key] = self.traces.get(key, 0) + 1
            if self.traces[key] > 1:
                self.retraces[0] += 1
                self.retraces[1] += seconds

    # -- training and inference calls ------------------------------------------------------
    def training_entered(self) -> None:
        """fit or train_on_batch began: the first step is running (its data and tracing too)."""
        here = self.here
        with self.lock:
            self.training += 1
            if (self.fit_start is None and not self.reported.get("first_step") and not here.fn
                    and not here.call):
                self.close_build()
                self.fit_start = self.clock()
                self.send("phase_start", "first_step")

    def training_left(self) -> None:
        with self.lock:
            self.training = max(0, self.training - 1)
            if not self.training:
                self.batch_open = False
                self._close_batch_step()

    def batch_began(self) -> None:
        """fit told its callbacks a training batch begins: its step ends at the batch's end."""
        with self.lock:
            self._close_batch_step()  # the last batch's end was never told
            self.batch_open = True

    def batch_ended(self, end: float) -> None:
        """fit hands a training batch's logs to its callbacks (before any of them runs)."""
        with self.lock:
            self.batch_open = False
            self._close_batch_step(edge=end)

    def step_ended(self, start: float, end: float) -> None:
        """A step's own work ended: in a batch of fit it ends at the batch's edge, else now."""
        with self.lock:
            if not self.batch_open:
                self.step_done(start, end)
            elif self.batch_step is None:
                self.batch_step = (start, end)
            else:  # steps_per_execution in an eager fit: one batch, several applies
                self.batch_step = (self.batch_step[0], end)

    def _close_batch_step(self, edge: Optional[float] = None) -> None:
        """The pending step of fit's batch ends: at the batch's edge when told, else its own end."""
        if self.batch_step is not None:
            (start, end), self.batch_step = self.batch_step, None
            self.step_done(start, end if edge is None else edge)

    def call_possible(self) -> bool:
        """Whether a call now could be an inference or build (not nested in something else)."""
        here = self.here
        return not (here.fn or here.call or here.load)

    def call_entered(self, wanted: bool, symbolic: bool) -> Optional[str]:
        """A model is called (or predicts). Returns what the call is: "inference" (timed),
        "build" (a call on symbolic tensors: construction) or None (part of something else)."""
        here = self.here
        if not self.call_possible():
            return None
        if symbolic:
            return "build"
        if not wanted or here.tape or self.training:
            return None
        here.call += 1
        return "inference"

    def call_left(self, kind: Optional[str], start: float, end: float) -> None:
        if kind == "build":
            self.layer_made(start, end)
        elif kind == "inference":
            self.here.call = max(0, self.here.call - 1)
            self.call_done(start, end)

    # -- steps and calls -------------------------------------------------------------------
    # Steady state is the program's own rhythm: the time from one step's (or call's) end to
    # the next's, the input pipeline and the loop's Python included, as its own clock has it.
    def step_done(self, start: float, end: float) -> None:
        with self.lock:
            if not self.reported.get("first_step"):
                start = min(start, self.fit_start or start)
                self.once("first_step", start, end)
                self.first_done("first_step", start, end)
                self.at_ready_point("first_step", "step", end)
            elif self.ready_kind in ("step", "any"):
                self.ready_kind = "step"
                self.steady_add(end)

    def call_done(self, start: float, end: float) -> None:
        with self.lock:
            if self.training:
                return  # inside fit or train_on_batch (a strategy's replica calls): training
            if not self.reported.get("first"):
                self.once("first", start, end)
                self.first_done("first", start, end)
                self.at_ready_point("first_inference", "call", end)
            elif self.ready_kind in ("call", "any"):
                self.ready_kind = "call"
                self.steady_add(end)

    def at_ready_point(self, point: str, kind: str, end: float) -> None:
        if self.ready_kind is None and self.until in (point, "exit"):
            self.ready_kind, self.last_end = kind, end
            if self.until != "exit":  # to the exit, the ready point is the exit (at_exit)
                self.ready()
            if self.steady_n == 0:
                self.finish_steady()
            else:
                self.send("phase_start", "steady")

    def marked(self, name: str) -> None:
        """The program's mark: at --until mark:NAME, steady state is its next steps or calls,
        whichever it makes; a program that makes none within STEADY_WAIT_S is measured as is."""
        with self.lock:
            if self.ready_kind is not None or self.until != f"mark:{name}":
                return
            self.ready_kind, self.last_end = "any", self.clock()
            self.ready()
            if self.steady_n == 0:
                self.finish_steady()
                return
            self.send("phase_start", "steady")
        timer = threading.Timer(STEADY_WAIT_S, self._no_steps_after_mark)
        timer.daemon = True
        timer.start()

    def _no_steps_after_mark(self) -> None:
        with self.lock:
            if not self.steady and not self.steady_done:
                self.finish_steady()

    def steady_add(self, end: float) -> None:
        if self.steady_done:
            return
        if self.steady_start is None:
            self.steady_start = self.last_end
        self.steady.append(end - (self.last_end if self.last_end is not None else end))
        self.last_end = end
        now = self.clock()
        if len(self.steady) >= self.steady_n:
            self.finish_steady()
        elif now - self.last_progress > _PROGRESS_EVERY_S:
            self.last_progress = now
            self.send("progress", "steady", done=len(self.steady), total=self.steady_n)

    def finish_steady(self) -> None:
        """Steady state measured (or cut short at exit): retraces first, then steady, whose
        end is what tflaunch waits for before it stops the program. No step or call after
        the ready point: a steady end with n = 0, which is no phase (never a zero row)."""
        with self.lock:
            if self.steady_done:
                return
            self.steady_done = True
            self.send_retraces()
            values = sorted(self.steady)
            latency: Dict[str, float] = {"n": len(values)}
            if values:
                import statistics  # here, not at start-up: the program's own start pays for nothing it need not

                latency.update(median=statistics.median(values), min=values[0], max=values[-1],
                               mean=statistics.fmean(values),
                               p90=values[min(len(values) - 1, int(0.9 * len(values)))])
            start = self.steady_start if self.steady_start is not None else self.clock()
            end = self.last_end if values and self.last_end is not None else start
            if self.until != "exit":
                self.before_stop()  # the program ends at this event: its own atexit will not run
            self.span("steady", start, end, latency=latency)

    def send_retraces(self) -> None:
        if self.retraces[0] and not self.reported.get("retraces"):
            self.reported["retraces"] = True
            self.send("phase_end", "retraces", duration=self.retraces[1], count=self.retraces[0], rss=None,
                      peak_rss=None)

    def at_exit(self) -> None:
        if self.until == "exit":
            self.ready()
        self.close_build()
        with self.lock:
            self._close_batch_step()
        if self.ready_kind is not None:
            self.finish_steady()
        self.send_retraces()

    # -- what cannot be observed -----------------------------------------------------------
    def cannot_observe(self, reason: str) -> None:
        """Part of the program cannot be observed (`reason` says which and why). When --until
        needs it, the run is refused now, at the import, with what to measure instead: before
        the program trains to its end and is blamed for it. Otherwise it is noted once."""
        with self.lock:
            if reason in self.unobserved:
                return
            self.unobserved.append(reason)
        if self.until in _SEEN_POINTS:
            self.send("error", self.last_phase, kind="not_observable", detail="", message=(
                f"tflaunch cannot observe this program's {self.until.replace('_', ' ')}: {reason}. It stopped the "
                f"program at that import, before it ran on. Measure it to --until exit, or mark the point in it "
                f"(tflaunch_mark.mark(NAME), README: Marks) and measure to --until mark:NAME."))
            self.refuse()
        else:
            self.send("notice", self.last_phase, message=f"Not observed: {reason}; phases after the import are "
                      "those tflaunch can see (marks still count).")

    # -- marks --------------------------------------------------------------------------
    def mark(self, name: str) -> None:
        self.send("mark", self.last_phase, name=name)
        self.marked(name)

    def mark_span(self, name: str, start: float, end: float) -> None:
        self.span(name, start, end)


_OBSERVER: Optional[Observer] = None


def observer() -> Optional[Observer]:
    """This process's observer (tflaunch_mark finds it here), or None when not observed."""
    return _OBSERVER


def set_observer(obs: Optional[Observer]) -> None:
    global _OBSERVER
    _OBSERVER = obs
