"""tflaunch launch hook: applies a launch profile's tf.config settings to any program, and,
when tflaunch measures the program, observes its phases.

`tflaunch run --profile NAME -- python train.py` (and every program tflaunch measures) puts
this folder first on PYTHONPATH and the settings in TFLAUNCH_TF_CONFIG. Python imports
sitecustomize at start-up; this one watches for `import tensorflow` and `import keras` and,
the moment TensorFlow has loaded and before the program can run an op, applies threads,
memory growth and memory limits with the probe's own apply_tf_config. Everything read from
the environment (visible GPUs, oneDNN, log level, XLA auto-clustering, the user's variables)
was set by tflaunch before exec.

When TFLAUNCH_EVENTS_FD names an inherited pipe, the probe's observer (probe/observer/observe.py,
put in by probe/observer/observe_install.py) reports the program's phases on it; the variables
are then removed from os.environ, so the program's own subprocesses are not observed as if
they were the program.
Standard library only: it runs in the user's interpreter, where tflaunch may be absent.
"""

import importlib.machinery
import importlib.util
import json
import os
import sys
import time

CONFIG_ENV = "TFLAUNCH_TF_CONFIG"
EVENTS_FD_ENV = "TFLAUNCH_EVENTS_FD"
OBSERVE_ENV = "TFLAUNCH_OBSERVE"
_WATCHED = ("tensorflow", "keras", "tf_keras")
_BEGAN = time.perf_counter()  # this hook's start: its own time is watching's cost (observer/cost.py)
# The standard library modules the observer's code imports beyond this file's, all of which
# `import tensorflow` imports too (tests/test_watch_cost.py checks both): loaded first and
# timed apart, since a program that imports TensorFlow pays for them with or without tflaunch.
STDLIB_AHEAD = ("atexit", "contextlib", "ctypes", "fcntl", "functools", "inspect", "re", "signal", "tempfile",
                "termios", "threading", "typing")
_HERE = os.path.dirname(os.path.abspath(__file__))


def _warn(message):
    sys.stderr.write(f"tflaunch: {message}\n")


_ENTRY = []  # the probe's entry module, once loaded (kept here: sys.modules is the program's)


def _entry():
    """The probe's entry module (two folders up in every layout), loaded by location once."""
    if not _ENTRY:
        probe_dir = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "probe")
        spec = importlib.util.spec_from_file_location("tflaunch_probe_entry", os.path.join(probe_dir, "__main__.py"))
        entry = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(entry)
        _ENTRY.append(entry)
    return _ENTRY[0]


def _own(load):
    """Import tflaunch's own modules with their bytecode written (the probe's own_bytecode)."""
    return _entry().own_bytecode(load)


def _probe_package():
    """tflaunch's probe package, loaded by location."""
    return _own(_entry().load_package)


def apply(tf, cfg):
    """Apply the tf.config part of a profile with the probe's own code. A failure is
    reported, never fatal."""
    try:
        _own(lambda: importlib.import_module(_probe_package().__name__ + ".tf_setup")).apply_tf_config(tf, cfg)
    except Exception as exc:  # the user's program must run even if a setting cannot be applied
        _warn(f"could not apply the launch profile's TensorFlow settings: {type(exc).__name__}: {exc}")


class _WatchedSpec(importlib.machinery.ModuleSpec):
    """A module spec that says when its module starts and ends executing: the import system
    sets `_initializing` to True right before exec_module and to False right after. Hooking
    that attribute, rather than wrapping exec_module, leaves no frame of ours under the
    import: a wrapper's frame made TensorFlow's own import about 30 ms slower (measured)."""

    @property
    def _initializing(self):
        return self.__dict__.get("_tflaunch_initializing", False)

    @_initializing.setter
    def _initializing(self, value):
        self.__dict__["_tflaunch_initializing"] = value
        watcher = self.__dict__.get("_tflaunch_watcher")
        if watcher is None:
            return
        if not value:
            # Executed: the spec becomes the plain ModuleSpec it was, so the program that
            # looks at `module.__spec__` sees what it would see without tflaunch.
            del self.__dict__["_tflaunch_watcher"], self.__dict__["_tflaunch_initializing"]
            self.__class__ = importlib.machinery.ModuleSpec
            self._initializing = False
        try:
            if value:
                watcher.started(self.name)
            else:
                watcher.ended(self.name)
        except Exception as exc:  # the import itself must go on exactly as without tflaunch
            _warn(f"could not observe the import of {self.name}: {type(exc).__name__}: {exc}")


class _ImportWatcher:
    """Sees the imports of TensorFlow and Keras (the first execution of each) and what
    follows them. A spec found but never executed (TensorFlow asks whether keras exists)
    is no import. A meta path finder by its find_spec alone: importlib.abc would import
    importlib.resources (7 ms) into every program's start."""

    def __init__(self, cfg, observe):
        self.cfg, self.observe = cfg, observe
        self.executed = set()
        self.finding = False
        self.running = []  # (name, start): keras imports tensorflow inside its own import

    def find_spec(self, name, path=None, target=None):
        if name not in _WATCHED or name in self.executed or self.finding:
            return None
        self.finding = True  # the real spec, from the finders after this one
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.finding = False
        if spec is None or type(spec) is not importlib.machinery.ModuleSpec:
            return spec
        spec.__class__ = _WatchedSpec
        spec._tflaunch_watcher = self
        return spec

    def started(self, name):
        self.executed.add(name)
        if not self.running and self.observe is not None:
            self.observe.import_began(self.observe.observer())
        self.running.append((name, time.time()))

    def ended(self, name):
        start = next((t for n, t in self.running if n == name), time.time())
        self.running = [(n, t) for n, t in self.running if n != name]
        module = sys.modules.get(name)
        if module is None:
            return  # its import failed: the program sees the error as without tflaunch
        if name == "tensorflow" and self.cfg:
            apply(module, self.cfg)
        if self.observe is not None:
            began = time.perf_counter()
            try:
                self.observe.imported(self.observe.observer(), name, start, not self.running)
                self.observe.setup_took(time.perf_counter() - began)
            except Exception as exc:  # observing must never break the program
                _warn(f"could not observe {name}: {type(exc).__name__}: {exc}")


def _observer_module():
    """(the observer, started when tflaunch measures this program, else None; the seconds
    STDLIB_AHEAD took to load, which are not watching's cost)."""
    raw_fd = os.environ.pop(EVENTS_FD_ENV, None)
    raw = os.environ.pop(OBSERVE_ENV, None)
    if not raw_fd:
        return None, 0.0
    ahead = 0.0
    try:
        fd, settings = int(raw_fd), json.loads(raw or "{}")
        ahead = time.perf_counter()
        for name in STDLIB_AHEAD:
            importlib.import_module(name)
        ahead = time.perf_counter() - ahead
        package = _probe_package().__name__
        # Measured in the launcher's session as a background job: no terminal to stop it.
        importlib.import_module(package + ".terminal").leave_terminal()
        age = _own(lambda: importlib.import_module(package + ".age"))
        observe = _own(lambda: importlib.import_module(package + ".observer.observe_install"))
        observe.install(fd, settings, age.process_age())
        return observe, ahead
    except Exception as exc:
        _warn(f"cannot observe this program ({type(exc).__name__}: {exc}); it runs unobserved")
        return None, ahead


def _install():
    raw = os.environ.get(CONFIG_ENV)
    cfg = None
    if raw:
        try:
            # Only the settings that ask for something: defaults need no call at all.
            cfg = {k: v for k, v in json.loads(raw).items() if v} or None
        except (ValueError, AttributeError) as exc:
            _warn(f"ignoring {CONFIG_ENV}, which is not a JSON object: {exc}")
    observe, ahead = _observer_module()
    if cfg is not None or observe is not None:
        sys.meta_path.insert(0, _ImportWatcher(cfg, observe))
    if observe is not None:  # up to here: the environment's own sitecustomize is the program's
        observe.setup_took(time.perf_counter() - _BEGAN - ahead)
    # Step aside for the environment's own sitecustomize, if it has one.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    me = sys.modules.pop("sitecustomize")
    try:
        import sitecustomize  # noqa: F401  (the environment's own: it takes our place)
    except ImportError:
        sys.modules["sitecustomize"] = me  # importlib expects the name to stay bound
    # Back at the end, where it shadows nothing: `from tflaunch_mark import mark` finds it.
    sys.path.append(_HERE)


_install()
