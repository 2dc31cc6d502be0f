"""The observer's hooks on every Python: a start and an end around a call, with its arguments,
its result or that it raised; on 3.12+ with no wrapper (sys.monitoring: the function stays the
same object, a traceback and a warning's stacklevel are a plain run's), a wrapper before.
Each case runs in a child process of the interpreter named, with the probe's observer package
loaded by location as a program's launch hook loads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tflaunch.core.settings.child import PROBE_DIR

from .stacks.stacks import find_interpreter

SCRIPT = r'''
import functools, importlib.util, json, os, sys, traceback, warnings
sys.path.insert(0, os.path.join(sys.argv[1], ".."))
spec = importlib.util.spec_from_file_location("tflaunch_probe", os.path.join(sys.argv[1], "__init__.py"),
                                              submodule_search_locations=[sys.argv[1]])
package = importlib.util.module_from_spec(spec)
sys.modules["tflaunch_probe"] = package
spec.loader.exec_module(package)
from tflaunch_probe.observer import hook_tools, monitoring

if sys.argv[2:] == ["taken"]:  # another tool holds both ids tflaunch may use: wrappers, as before 3.12
    sys.monitoring.use_tool_id(3, "someone")
    sys.monitoring.use_tool_id(4, "someone else")

seen = []

def decorate(fn):  # one code object for every method it decorates, as Keras' filter_traceback
    @functools.wraps(fn)
    def error_handler(*args, **kwargs):
        return fn(*args, **kwargs)
    return error_handler

class Model:
    @decorate
    def predict(self, x, *more, scale=1, **options):
        warnings.warn("from predict", UserWarning, stacklevel=3)
        if x is None:
            raise ValueError("no input")
        return x * scale

    @decorate
    def evaluate(self, x):
        return -x

    def plain(self, x):
        return x + 1

original = Model.predict
hook_tools.hook(Model, "predict", lambda args, kwargs: seen.append(["start", args[1:], kwargs]) or "state",
                lambda state, result, raised: seen.append(["end", state, result, raised]))
hook_tools.hook(Model, "plain", lambda args, kwargs: seen.append(["plain", args[1:]]) or None)
model = Model()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    result = model.predict(2, 5, scale=3, verbose=0)  # the warning's stacklevel names this line
evaluated = model.evaluate(4)  # the same decorator's code, not watched
model.plain(1)
try:
    model.predict(None)
except ValueError as exc:
    frames = [f.name for f in traceback.extract_tb(exc.__traceback__)]
same = Model.predict is original
hook_tools.unhook(Model, "predict")
model.predict(7)
print(json.dumps({"monitoring": monitoring.available(), "same": same, "back": Model.predict is original, "seen": seen,
                  "result": result, "evaluated": evaluated, "warned_at": caught[0].lineno, "frames": frames}))
'''


def interpreters() -> list[object]:
    """This Python (3.11: wrappers) and this machine's 3.12 and 3.13 (sys.monitoring), if any."""
    found = [pytest.param(sys.executable, id=f"python{sys.version_info[0]}.{sys.version_info[1]}")]
    for version in ("3.12", "3.13"):
        path = find_interpreter(version)
        marks = () if path else pytest.mark.skip(reason=f"no Python {version} here (pyenv install {version})")
        found.append(pytest.param(path or "", id=f"python{version}", marks=marks))
    return found


def run(python: str, tmp_path: Path, *args: str) -> dict[str, object]:
    script = tmp_path / "hooked.py"
    script.write_text(SCRIPT)
    done = subprocess.run([python, "-I", str(script), str(PROBE_DIR), *args], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert isinstance(out, dict)
    return out


@pytest.mark.parametrize("python", interpreters())
def test_a_hook_sees_arguments_result_and_raise_and_steps_out(python: str, tmp_path: Path) -> None:
    out = run(python, tmp_path)
    modern = out["monitoring"]
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                             capture_output=True, text=True).stdout.strip()
    assert modern == (version == "True")
    as_seen(out, modern)


def test_both_tool_ids_taken_gives_the_wrappers(tmp_path: Path) -> None:
    python = find_interpreter("3.12") or find_interpreter("3.13")
    if python is None:
        pytest.skip("no Python 3.12 or 3.13 on this machine (pyenv install 3.12)")
    out = run(python, tmp_path, "taken")
    assert out["monitoring"] is False
    as_seen(out, False)


def as_seen(out: dict[str, object], modern: bool) -> None:
    """What every hook sees, and what only a wrapper shows."""
    assert out["seen"] == [["start", [2, 5], {"scale": 3, "verbose": 0}], ["end", "state", 6, False],
                           ["plain", [1]],
                           ["start", [None], {}], ["end", "state", None, True]]
    assert out["result"] == 6 and out["evaluated"] == -4 and out["back"] is True
    if modern:  # nothing replaced: the same function, a plain run's warning line and frames
        assert out["same"] is True
        assert out["warned_at"] == next(n for n, line in enumerate(SCRIPT.splitlines(), 1) if "names this line" in line)
        assert out["frames"] == ["<module>", "error_handler", "predict"]
    else:  # the wrapper's frame, dressed as the decorator's: what the README says differs
        assert out["same"] is False
        assert out["frames"] == ["<module>", "error_handler", "error_handler", "predict"]
