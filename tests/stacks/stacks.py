"""The stacks researchers run, as venvs built from the interpreters this machine has.

Each stack is a Python, a TensorFlow and the Keras it runs: Keras 2 bundled with TensorFlow
2.13-2.15, tf-keras on 2.21 (TF_USE_LEGACY_KERAS=1), Keras 3 on 2.21 with Python 3.12 and 3.13.
`make test-stacks` builds them (`python -m tests.stacks.stacks`) into a cache outside the
repository ($TFLAUNCH_STACKS_DIR, else ~/.cache/tflaunch-stacks), once: a venv is rebuilt only
when its requirements change. A stack whose interpreter is absent is skipped with its reason,
which the tests repeat; nothing is skipped silently.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

MARKER = ".tflaunch-stack.json"  # in a built venv: what it was built with


@dataclass(frozen=True)
class Stack:
    name: str
    python: str  # "3.8"
    requirements: tuple[str, ...]
    keras: str  # what tf.keras is there, in words
    env: dict[str, str] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return cache() / self.name

    @property
    def interpreter(self) -> Path:
        return self.folder / "bin" / "python"


STACKS = (
    Stack("py38-tf213", "3.8", ("tensorflow-cpu==2.13.*", "psutil"), "Keras 2.13 (TensorFlow's own)"),
    Stack("py310-tf215", "3.10", ("tensorflow-cpu==2.15.*", "psutil"), "Keras 2.15 (TensorFlow's own)"),
    Stack("py311-tf221-tfkeras", "3.11", ("tensorflow==2.21.*", "tf-keras==2.21.*", "psutil"), "tf-keras 2.21",
          {"TF_USE_LEGACY_KERAS": "1"}),
    Stack("py312-tf221", "3.12", ("tensorflow==2.21.*", "psutil"), "Keras 3"),
    Stack("py313-tf221", "3.13", ("tensorflow==2.21.*", "psutil"), "Keras 3"),
)


def cache() -> Path:
    return Path(os.environ.get("TFLAUNCH_STACKS_DIR") or Path.home() / ".cache" / "tflaunch-stacks")


def find_interpreter(version: str) -> str | None:
    """Python `version` on this machine: pyenv's newest of that series, else one on PATH."""
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    found = sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"),
                   key=lambda p: [int(x) for x in p.split("/versions/")[1].split("/")[0].split(".") if x.isdigit()])
    return found[-1] if found else shutil.which(f"python{version}")


def built(stack: Stack) -> bool:
    try:
        marker = json.loads((stack.folder / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return stack.interpreter.exists() and marker.get("requirements") == list(stack.requirements)


def why_absent(stack: Stack) -> str | None:
    """Why the tests cannot run this stack now, or None when it is built."""
    if built(stack):
        return None
    if find_interpreter(stack.python) is None:
        return (f"no Python {stack.python} on this machine (pyenv install {stack.python}, or the distribution's "
                f"python{stack.python}), so stack {stack.name} is not built")
    return f"stack {stack.name} is not built yet: `make test-stacks` builds it in {cache()}"


def build(stack: Stack) -> str:
    """Build one stack's venv (or find it built); returns what happened, in words."""
    if built(stack):
        return f"{stack.name}: ready ({stack.folder})"
    python = find_interpreter(stack.python)
    if python is None:
        return f"{stack.name}: skipped: {why_absent(stack)}"
    shutil.rmtree(stack.folder, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(stack.folder)], check=True)
    pip = [str(stack.interpreter), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # pip's own chatter (this machine's index warnings) is shown only when the install fails.
    done = subprocess.run([*pip, *stack.requirements], capture_output=True, text=True)
    if done.returncode:
        print(done.stdout[-4000:], done.stderr[-4000:], sep="\n", file=sys.stderr)
        done.check_returncode()
    (stack.folder / MARKER).write_text(json.dumps({"requirements": list(stack.requirements), "python": python}))
    return f"{stack.name}: built from {python}"


def main() -> int:
    cache().mkdir(parents=True, exist_ok=True)
    failed = 0
    for stack in STACKS:
        try:
            print(build(stack), flush=True)
        except subprocess.CalledProcessError as exc:
            failed += 1
            print(f"{stack.name}: FAILED to build ({exc}); its tests will say it is not built", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
