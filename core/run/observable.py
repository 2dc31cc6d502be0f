"""What the program observer cannot watch, known before anything is launched.

The observer sees steps and inferences on TensorFlow only (probe/observer/keras_frameworks.py
says so at the import, and refuses there). One case is known before exec, at no cost: Keras 3 told to
run on another backend, by KERAS_BACKEND in the child's environment or by the backend of
Keras' own configuration file (KERAS_HOME/keras.json, else ~/.keras/keras.json), which the
variable overrides. A run whose --until needs a step or an inference is refused then, with the
reason and what to measure instead; the import-time refusal covers what only the program knows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..phases import UNTIL_PHASE
from ..settings.config import LaunchConfig, Problem
from .environment import launch_environment


def keras_backend(env: Mapping[str, str]) -> str | None:
    """The backend Keras 3 will choose in a process with `env`, if anything chooses one."""
    if env.get("KERAS_BACKEND"):
        return env["KERAS_BACKEND"].strip().lower()
    home = Path(env.get("KERAS_HOME") or Path(env.get("HOME") or Path.home()) / ".keras")
    try:
        backend = json.loads((home / "keras.json").read_text(encoding="utf-8")).get("backend")
    except (OSError, ValueError, AttributeError):
        return None
    return str(backend).strip().lower() if backend else None


def unobservable_problems(config: LaunchConfig) -> list[Problem]:
    """Why --until cannot be reached as asked on this program, before it runs."""
    if not config.is_program or config.until not in UNTIL_PHASE:  # a step's or an inference's end
        return []
    backend = keras_backend(launch_environment(config))
    if backend in (None, "tensorflow"):
        return []
    point = config.until.replace("_", " ")
    return [Problem("until", f"Keras would run on its {backend} backend here (KERAS_BACKEND or keras.json), and "
                             f"tflaunch observes steps and inferences only on TensorFlow, so it could not see the "
                             f"program's {point}. Measure it to --until exit, or mark the point in it "
                             "(tflaunch_mark.mark(NAME), README: Marks) and measure to --until mark:NAME.")]
