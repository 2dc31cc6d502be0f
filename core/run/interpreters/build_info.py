"""Which TensorFlow an interpreter has and how it was built: tf.sysconfig.get_build_info(),
asked in a child process of that interpreter, with a timeout.

get_build_info() returns the dict of tensorflow/python/platform/build_info.py, a file
generated when TensorFlow is built. The child reads that file without importing
TensorFlow (milliseconds instead of seconds, and no GPU touched); only where the file is
not there does it import TensorFlow and call get_build_info().
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .interpreter import answer_of, ask

# Runs inside the chosen interpreter: standard library only, valid on Python 3.8+.
BUILD_INFO_CODE = r"""
import importlib.util, json, os, platform, sys
out = {"python": platform.python_version(), "executable": sys.executable, "tensorflow": None,
       "build_info": None, "source": None, "error": None}
spec = importlib.util.find_spec("tensorflow")
if spec is not None:
    try:
        from importlib import metadata
    except ImportError:
        metadata = None
    for dist in ("tensorflow", "tensorflow-cpu", "tf-nightly", "tensorflow-macos", "tensorflow-intel"):
        try:
            out["tensorflow"] = metadata.version(dist)
            break
        except Exception:
            pass
    out["tensorflow"] = out["tensorflow"] or "unknown"
    roots = list(spec.submodule_search_locations or [])
    files = [os.path.join(root, "python", "platform", "build_info.py") for root in roots]
    try:
        for name in files:
            if os.path.isfile(name):
                scope = {}
                with open(name) as f:
                    exec(compile(f.read(), name, "exec"), scope)
                if isinstance(scope.get("build_info"), dict):
                    out["build_info"], out["source"] = dict(scope["build_info"]), name
                    break
        if out["build_info"] is None:  # an older or unusual layout: ask TensorFlow itself
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
            import tensorflow as tf
            out["build_info"], out["source"] = dict(tf.sysconfig.get_build_info()), "tf.sysconfig.get_build_info()"
    except BaseException as exc:
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(out, default=str))
"""


@dataclass(frozen=True)
class BuildInfo:
    """What an interpreter's TensorFlow says about its build, or why it could not say."""

    python: str  # the interpreter as the user named it
    ok: bool
    message: str  # one line: "Python 3.11.9, TensorFlow 2.21.0" or what went wrong and what to do
    python_version: str | None = None
    tensorflow: str | None = None
    info: dict[str, Any] = field(default_factory=dict)  # get_build_info()'s dict

    @property
    def is_cuda_build(self) -> bool:
        return bool(self.info.get("is_cuda_build"))

    @property
    def capabilities(self) -> list[str]:
        value = self.info.get("cuda_compute_capabilities") or []
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []

    def to_dict(self) -> dict[str, Any]:
        keys = ("is_cuda_build", "is_rocm_build", "cuda_version", "cudnn_version", "cuda_compute_capabilities")
        return {"python": self.python, "ok": self.ok, "message": self.message, "python_version": self.python_version,
                "tensorflow": self.tensorflow,
                "build_info": {key: self.info.get(key) for key in keys} if self.info else None}


def interpret(python: str, exit_code: int | None, stdout: str, stderr: str = "") -> BuildInfo:
    """The child's answer as a BuildInfo whose message a user can act on."""
    data = answer_of(python, exit_code, stdout, stderr)
    if isinstance(data, str):
        return BuildInfo(python, False, f"{data} Give the Python executable of an environment with TensorFlow "
                         "(--python).")
    version, tf = data.get("python"), data.get("tensorflow")
    if not tf:
        return BuildInfo(python, False, f"{python} (Python {version}) has no TensorFlow. Install it with: "
                         f"{python} -m pip install tensorflow", version)
    info = data.get("build_info")
    if data.get("error") or not isinstance(info, dict):
        return BuildInfo(python, False, f"TensorFlow {tf} in {python} could not say how it was built "
                         f"({data.get('error') or 'no build info'}). Reinstall it: {python} -m pip install "
                         "--force-reinstall tensorflow", version, tf)
    return BuildInfo(python, True, f"Python {version}, TensorFlow {tf}", version, tf, info)


def build_info(python: str, timeout: float = 60.0) -> BuildInfo:
    """Ask `python` for its TensorFlow's build info; blocking, at most `timeout` seconds."""
    asked = ask(python, BUILD_INFO_CODE, timeout, longer=", or allow longer with --timeout")
    if isinstance(asked, str):
        return BuildInfo(python, False, asked)
    return interpret(python, asked.exit_code, asked.stdout, asked.stderr)
