"""LaunchConfig: every setting of one run, its validation, and the probe command it makes."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from . import probe

PROBE_PATH = Path(probe.__file__).resolve()

SAMPLE_MODELS: dict[str, str] = {
    "mlp": "Dense(1024) on 784 inputs, 0.8 M parameters",
    "wide": "8 × Dense(2048), 34 M parameters (about 130 MB)",
    "cnn": "MobileNetV2 architecture, random weights, 3.5 M parameters",
    "multi": "two named inputs (image and table), for signature handling",
}

LOG_LEVELS: dict[int, str] = {
    0: "all messages",
    1: "hide INFO",
    2: "hide INFO and WARNING",
    3: "errors hidden too",
}

DEFAULT_TIMEOUT_S = 600.0
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Problem:
    """A setting that cannot be used, and why, in words that say what to do."""

    field: str
    message: str


@dataclass(frozen=True)
class LaunchConfig:
    model: str = "sample:mlp"
    python: str = sys.executable
    intra: int = 0  # 0 = TensorFlow's default
    inter: int = 0
    xla: bool = False
    onednn: bool | None = None  # None = TensorFlow's default
    log_level: int | None = None
    visible_gpus: tuple[int, ...] | None = None  # None = all
    memory_growth: bool = False
    memory_limit_mb: int | None = None
    batch: int = 1
    steady: int = 20
    extra_env: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT_S

    def replace(self, **changes: Any) -> "LaunchConfig":
        return replace(self, **changes)

    def validate(self) -> list[Problem]:
        problems = [*_model_problems(self.model), *_python_problems(self.python)]
        for name, low in (("intra", 0), ("inter", 0), ("batch", 1), ("steady", 0)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                problems.append(Problem(name, f"{name} must be a whole number ≥ {low}, not {value!r}."))
        if self.memory_limit_mb is not None and self.memory_limit_mb <= 0:
            problems.append(Problem("memory_limit_mb", "The GPU memory limit must be a positive number of MiB."))
        if self.memory_limit_mb and self.memory_growth:
            problems.append(Problem(
                "memory_limit_mb",
                "TensorFlow cannot combine memory growth with a memory limit; choose one.",
            ))
        if self.log_level is not None and self.log_level not in LOG_LEVELS:
            problems.append(Problem("log_level", "The log level must be 0, 1, 2 or 3."))
        if self.visible_gpus is not None and any(i < 0 for i in self.visible_gpus):
            problems.append(Problem("visible_gpus", "GPU indices start at 0."))
        bad_names = [k for k in self.extra_env if not _ENV_NAME.match(k)]
        if bad_names:
            problems.append(Problem("extra_env", f"Not a valid environment variable name: {bad_names[0]!r}."))
        if self.timeout <= 0:
            problems.append(Problem("timeout", "The timeout must be a positive number of seconds."))
        return problems

    def probe_config(self, launched_at: float | None = None) -> dict[str, Any]:
        """What the probe reads: everything but the launcher's own settings."""
        cfg = {k: v for k, v in asdict(self).items() if k not in ("python", "timeout")}
        if cfg["visible_gpus"] is not None:
            cfg["visible_gpus"] = list(cfg["visible_gpus"])
        cfg["launched_at"] = time.time() if launched_at is None else launched_at
        return cfg

    def command(self) -> list[str]:
        """argv of the probe process."""
        return [self.python, str(PROBE_PATH), json.dumps(self.probe_config())]

    def summary(self) -> str:
        """Short text of the settings that differ from defaults, for lists and titles."""
        default = LaunchConfig()
        parts = []
        for f in fields(self):
            if f.name in ("model", "python", "timeout"):
                continue
            value = getattr(self, f.name)
            if value != getattr(default, f.name):
                parts.append(f"{f.name}={_short(value)}")
        if self.python != default.python:
            parts.append(f"python={self.python}")
        return " ".join(parts) or "defaults"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["visible_gpus"] is not None:
            data["visible_gpus"] = list(data["visible_gpus"])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LaunchConfig":
        """Build from stored data, ignoring keys this version does not know."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if values.get("visible_gpus") is not None:
            values["visible_gpus"] = tuple(int(i) for i in values["visible_gpus"])
        return cls(**values)


def _short(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value) or "none"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def _model_problems(model: str) -> list[Problem]:
    if not model:
        return [Problem("model", "Choose a model: a SavedModel folder, a .keras or .h5 file, or a sample.")]
    if model.startswith("sample:"):
        name = model[len("sample:"):]
        if name not in SAMPLE_MODELS:
            choices = ", ".join(f"sample:{s}" for s in SAMPLE_MODELS)
            return [Problem("model", f"There is no built-in sample '{name}'. Choose one of: {choices}.")]
        return []
    try:
        probe.check_model_path(model)
    except probe.ProbeFailure as failure:
        return [Problem("model", failure.message)]
    except OSError as exc:
        return [Problem("model", f"The model {model} cannot be read: {exc.strerror}.")]
    return []


def _python_problems(python: str) -> list[Problem]:
    resolved = shutil.which(python) if os.sep not in python else python
    if not resolved or not os.path.exists(resolved):
        return [Problem("python", f"The interpreter {python} does not exist. Choose a python executable.")]
    if os.path.isdir(resolved) or not os.access(resolved, os.X_OK):
        return [Problem("python", f"The interpreter {python} is not an executable file.")]
    return []
