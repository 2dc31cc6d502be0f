"""tflaunch launch hook: applies a launch profile's tf.config settings to any script.

`tflaunch run --profile NAME -- python train.py` puts this folder first on PYTHONPATH and
the settings in TFLAUNCH_TF_CONFIG. Python imports sitecustomize at start-up; this one
watches for `import tensorflow` and, the moment TensorFlow has loaded and before the
script can run an op, applies threads, XLA, memory growth and memory limits. Settings
read from the environment (visible GPUs, oneDNN, log level) are set by tflaunch itself.
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
    """Apply the tf.config part of a profile; a setting that fails is reported, not fatal."""
    steps = []
    if cfg.get("intra"):
        steps.append(("intra-op threads", lambda: tf.config.threading.set_intra_op_parallelism_threads(int(cfg["intra"]))))
    if cfg.get("inter"):
        steps.append(("inter-op threads", lambda: tf.config.threading.set_inter_op_parallelism_threads(int(cfg["inter"]))))
    if cfg.get("xla"):
        steps.append(("XLA JIT", lambda: tf.config.optimizer.set_jit("autoclustering")))
    for gpu in tf.config.list_physical_devices("GPU") if cfg.get("memory_growth") or cfg.get("memory_limit_mb") else []:
        if cfg.get("memory_growth"):
            steps.append((f"memory growth on {gpu.name}", lambda g=gpu: tf.config.experimental.set_memory_growth(g, True)))
        if cfg.get("memory_limit_mb"):
            limit = int(cfg["memory_limit_mb"])
            steps.append((f"memory limit on {gpu.name}", lambda g=gpu: tf.config.set_logical_device_configuration(
                g, [tf.config.LogicalDeviceConfiguration(memory_limit=limit)])))
    for what, step in steps:
        try:
            step()
        except (RuntimeError, ValueError) as exc:
            _warn(f"could not apply {what} from the launch profile: {exc}")


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
