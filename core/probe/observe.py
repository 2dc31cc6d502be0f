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
import json
import os
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from . import anatomy  # anatomy hook
from .hook_tools import guarded
from .keras_hooks import patch_keras
from .tf_hooks import patch_tensorflow

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
            anatomy.at_ready_point(self, "first_step", min(start, self.fit_start or start), end)  # anatomy hook
            self.at_ready_point("first_step", "step", end)
        elif self.ready_kind in ("step", "any"):
            self.ready_kind = "step"
            self.steady_add(end)

    def call_done(self, start: float, end: float) -> None:
        if self.training_depth:
            return  # inside fit or train_on_batch (a strategy's replica calls): training, not inference
        if not self.reported.get("first"):
            self.once("first", start, end)
            anatomy.at_ready_point(self, "first", start, end)  # anatomy hook
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
    atexit.register(guarded(obs.at_exit))
    obs.anatomy = bool(settings.get("anatomy"))  # type: ignore[attr-defined]  # anatomy hook
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
        anatomy.after_import(obs)  # anatomy hook
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
