"""Putting the observer into a program: the launch hook (settings/launch_hook/sitecustomize.py)
and a warm child (warm_child.py) call these, and they connect the Observer's rules
(observe.py) to the hooks into TensorFlow and Keras (tf_hooks.py, keras_hooks.py).
Standard library only, Python 3.8."""

import atexit
import os
import sys
import tempfile
import time
from typing import Any, Dict, Optional

from . import keras_frameworks
from .cost import COST, Cost
from .hook_tools import guarded
from .keras_hooks import patch_keras
from .observe import Observer, observer, set_observer
from .tf_hooks import patch_tensorflow

__all__ = ["install", "import_began", "imported", "warm_start", "observer", "setup_took"]

# TensorFlow's autograph writes each converted function to a file like this, removed by an
# atexit handler; a program tflaunch stops at its ready point never runs its atexit.
_AUTOGRAPH_PREFIX = "__autograph_generated_file"


def install(fd: int, settings: Dict[str, Any], process_age: Optional[float]) -> Observer:
    """Start observing this process: hello and spawn now, the rest as it happens."""
    os.set_inheritable(fd, False)  # a program's own subprocesses never get the channel

    def write(data: bytes) -> None:
        os.write(fd, data)

    obs = Observer(write, str(settings.get("until", "first_step")), int(settings.get("steady", 20)))
    describe, tidy = guarded(lambda: describe_environment(obs)), guarded(remove_autograph_files)

    read_back = guarded(lambda: read_back_settings(obs))

    def before_stop() -> None:  # tflaunch ends the program after steady: said and tidied first
        describe()
        read_back()
        tidy()

    obs.before_stop = before_stop
    # An extra run measured with its anatomy: the profiler starts once TensorFlow is imported
    # and its trace is read at the end of the first step (or first inference).
    obs.anatomy = bool(settings.get("anatomy"))  # type: ignore[attr-defined]
    if obs.anatomy:  # type: ignore[attr-defined]
        obs.first_done = guarded(lambda phase, start, end: _anatomy().at_ready_point(obs, phase, start, end))
    obs.ready = guarded(lambda: tell_cost(obs))
    set_observer(obs)
    obs.send("hello", "spawn", pid=os.getpid(), process_age=process_age, python=sys.version.split()[0])
    if process_age is not None:
        now = time.time()
        obs.span("spawn", now - max(process_age, 0.0), now)
    atexit.register(guarded(obs.at_exit))
    return obs


def _anatomy() -> Any:
    """The anatomy's module, loaded for a run that takes one alone: its rules and the profiler's
    readers cost every other program's start 5-10 ms (socket, shutil, 14 regular expressions)."""
    from .. import anatomy

    return anatomy


def describe_environment(obs: Observer) -> None:
    """Once, at the ready point and after the program's own first step or call: the environment
    as the probe describes a model's (the GPUs TensorFlow used, each with its allocator's peak,
    the build), so a program's summary names its GPUs and GPU memory as a model's does. Read
    only then, so that it initialises nothing the program had not."""
    tf = sys.modules.get("tensorflow")
    if tf is None or obs.reported.get("environment") or not (obs.reported.get("first_step")
                                                              or obs.reported.get("first")):
        return
    obs.reported["environment"] = True
    from ..environment import environment

    described = environment(tf, None)
    described["keras"] = _keras_in_use() or ""
    obs.send("result", obs.last_phase, environment=described, model={})


def remove_autograph_files() -> None:
    """The files autograph wrote for this process (its modules name them): removed as its
    own atexit would have, since tflaunch ends the program before that runs."""
    folder = os.path.realpath(tempfile.gettempdir())
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if (isinstance(path, str) and os.path.basename(path).startswith(_AUTOGRAPH_PREFIX)
                and os.path.dirname(os.path.realpath(path)) == folder):
            try:
                os.remove(path)
            except OSError:
                pass


def tell_cost(obs: Observer, cost: Cost = COST) -> None:
    """What watching cost the program up to its ready point (cost.py), on the channel."""
    obs.send("watching", obs.last_phase, **cost.fields())


def setup_took(seconds: float) -> None:
    """The launch hook's own time (its start, the hooks put in at an import): watching's cost."""
    COST.setup += seconds


def import_began(obs: Optional[Observer]) -> None:
    """The first `import tensorflow` or `import keras` has begun: the import phase runs."""
    if obs is not None:
        obs.import_began()


def warm_start(obs: Observer) -> None:
    """In a child forked from a warm server: TensorFlow and Keras were imported before the
    launch, so their hooks go in now and there is no import phase to report."""
    began = time.perf_counter()
    obs.send("mark", "spawn", name="warm_start")
    if "tensorflow" in sys.modules:
        _tensorflow_loaded(obs)
    _patch_kerases(obs)
    _send_versions(obs)
    _say_what_is_not_observed(obs)
    setup_took(time.perf_counter() - began)  # the hooks put in: what the launch hook's imports do cold


def imported(obs: Optional[Observer], name: str, start: float, outermost: bool) -> None:
    """`import NAME` (tensorflow, keras or tf_keras) has just finished; `outermost` when no
    other of them was being imported around it (TensorFlow 2.13-2.15 import their Keras 2,
    and TF_USE_LEGACY_KERAS=1 tf-keras, inside their own import; keras imports tensorflow)."""
    if obs is None:
        return
    if outermost:
        obs.imported(start)
    if name == "tensorflow":
        _tensorflow_loaded(obs)
    _patch_kerases(obs)
    if outermost:  # not inside another's import: a module being imported may resolve names lazily
        _send_versions(obs)
        _say_what_is_not_observed(obs)


def _tensorflow_loaded(obs: Observer) -> None:
    """TensorFlow is loaded (imported now, or before a warm fork): its hooks, the anatomy's
    profiler, and the settings read back at the exit, before TensorFlow's own atexit runs
    (registered after it, so called first)."""
    patch_tensorflow(obs)
    if getattr(obs, "anatomy", False):
        guarded(_anatomy().after_import)(obs)
    atexit.register(guarded(lambda: read_back_settings(obs)))


def _patch_kerases(obs: Observer) -> None:
    """Every Keras whose import has finished, whichever generation (each hook goes in once)."""
    for keras in keras_frameworks.loaded():
        if keras.unobservable() is None:
            patch_keras(obs, keras)


def _say_what_is_not_observed(obs: Observer) -> None:
    """A Keras tflaunch cannot watch is said at its import, before the program's run costs
    anything: refused there when --until needs what cannot be seen, noted otherwise."""
    reasons = [k.unobservable() for k in keras_frameworks.loaded()]
    reasons += [f"{name} is a Keras tflaunch does not know" for name in keras_frameworks.unresolved()]
    for reason in reasons:
        if reason:
            obs.cannot_observe(reason)


def read_back_settings(obs: Observer) -> None:
    """The launch settings as this program's TensorFlow reports them (threads, oneDNN, XLA,
    GPUs), as a model run reads them back: once, at the ready point or the exit, and only once
    the program initialised its devices itself (reading them back would otherwise do it)."""
    tf = sys.modules.get("tensorflow")
    if tf is None or obs.reported.get("settings") or not obs.reported.get("devices"):
        return
    obs.reported["settings"] = True
    from ..tf_setup import read_back

    applied = read_back(tf, {})
    applied.pop("jit_compile", None)  # a model's setting: no launch can compile a program's model
    obs.send("settings", obs.last_phase, applied=applied)


def _send_versions(obs: Observer) -> None:
    versions = {}
    tensorflow = getattr(sys.modules.get("tensorflow"), "__dict__", {}).get("__version__")
    if tensorflow:
        versions["tensorflow"] = str(tensorflow)
    keras = _keras_in_use()
    if keras:
        versions["keras"] = keras
    if versions:
        obs.send("result", obs.last_phase, environment={"python": sys.version.split()[0], "cores": os.cpu_count(),
                                                         **versions}, model={})


def _keras_in_use() -> Optional[str]:
    """The Keras the program runs, as its version says it: tf-keras where it is loaded (it is
    what tf.keras is then), else the Keras it imported."""
    kerases = keras_frameworks.loaded()
    if not kerases:
        return None
    keras = next((k for k in kerases if k.package == "tf_keras"), kerases[0])
    return keras.version + (" (tf-keras)" if keras.package == "tf_keras" else "")
