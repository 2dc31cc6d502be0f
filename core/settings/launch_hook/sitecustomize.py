"""tflaunch launch hook: applies a launch profile's tf.config settings to any script.

`tflaunch run --profile NAME -- python train.py` puts this folder first on PYTHONPATH and
the settings in TFLAUNCH_TF_CONFIG. Python imports sitecustomize at start-up; this one
watches for `import tensorflow` and, the moment TensorFlow has loaded and before the
script can run an op, applies threads, memory growth and memory limits with the probe's
own apply_tf_config. Everything read from the environment (visible GPUs, oneDNN, log
level, XLA auto-clustering, the user's variables) was set by tflaunch before exec.
Standard library only: it runs in the user's interpreter, where tflaunch may be absent.
"""

import importlib.abc
import importlib.util
import json
import os
import sys

CONFIG_ENV = "TFLAUNCH_TF_CONFIG"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _warn(message):
    sys.stderr.write(f"tflaunch: {message}\n")


def apply(tf, cfg):
    """Apply the tf.config part of a profile with the probe's own code (tflaunch's probe
    package, two folders up in every layout). A failure is reported, never fatal."""
    try:
        probe_dir = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "probe")
        spec = importlib.util.spec_from_file_location("tflaunch_probe_entry", os.path.join(probe_dir, "__main__.py"))
        entry = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(entry)
        package = entry.load_package()
        importlib.import_module(package.__name__ + ".tf_setup").apply_tf_config(tf, cfg)
    except Exception as exc:  # the user's script must run even if a setting cannot be applied
        _warn(f"could not apply the launch profile's TensorFlow settings: {type(exc).__name__}: {exc}")


class _TensorFlowWatcher(importlib.abc.MetaPathFinder):
    def __init__(self, cfg):
        self.cfg = cfg

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)  # find the real spec, and watch only once
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load = spec.loader.exec_module
        cfg = self.cfg

        def exec_module(module):
            load(module)
            apply(module, cfg)

        spec.loader.exec_module = exec_module
        return spec


def _install():
    raw = os.environ.get(CONFIG_ENV)
    if raw:
        try:
            sys.meta_path.insert(0, _TensorFlowWatcher(json.loads(raw)))
        except ValueError as exc:
            _warn(f"ignoring {CONFIG_ENV}, which is not JSON: {exc}")
    # Step aside for the environment's own sitecustomize, if it has one.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    me = sys.modules.pop("sitecustomize")
    try:
        import sitecustomize  # noqa: F401  (the environment's own: it takes our place)
    except ImportError:
        sys.modules["sitecustomize"] = me  # importlib expects the name to stay bound


_install()
