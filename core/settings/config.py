"""LaunchConfig: every setting of one run, and the checks that say what is wrong with one.

Each field is declared once in vocabulary.SETTINGS (label, help, how it reaches
TensorFlow); what a child process gets from a config is built in child.py.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from ..phases import NAME, UNTIL_POINTS, normal_until
from ..probe.failure import ProbeFailure
from ..probe.model.input_shapes import InputSpecError
from ..probe.model.input_shapes import parse as parse_input
from ..probe.model.model_files import check_model_path
from ..probe.model.user_code import is_file
from ..safe_text import shown
from ..subject import Subject
from .display import short_value
from .vocabulary import BY_NAME, MAX_THREADS, SAMPLE_MODELS, SETTINGS, TF_DECIDES, Kind

__all__ = ["DEFAULT_TIMEOUT_S", "MAX_THREADS", "LaunchConfig", "Problem"]

DEFAULT_TIMEOUT_S: float = BY_NAME["timeout"].default
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # \Z: `$` would take a trailing newline
# Variables that settings own: setting them again through extra_env would give one
# setting two values.
MANAGED_VARIABLES: dict[str, str] = {
    "CUDA_VISIBLE_DEVICES": "visible_gpus",
    "TF_FORCE_GPU_ALLOW_GROWTH": "memory_growth",
    "TF_ENABLE_ONEDNN_OPTS": "onednn",
    "TF_CPP_MIN_LOG_LEVEL": "log_level",
    "TF_GPU_ALLOCATOR": "allocator",
    "TF_CUDNN_USE_AUTOTUNE": "cudnn_autotune",
    "CUDA_MODULE_LOADING": "module_loading",
    "CUDA_CACHE_PATH": "cuda_cache",
    "CUDA_CACHE_MAXSIZE": "cuda_cache",
}


@dataclass(frozen=True)
class Problem:
    """A setting that cannot be used, and why, in words that say what to do."""

    field: str
    message: str


def _declared(name: str) -> Any:
    """A LaunchConfig field with the default SETTINGS declares (a new dict for each config)."""
    setting = BY_NAME[name]
    if isinstance(setting.default, dict):
        return field(default_factory=setting.fresh_default)
    return field(default=setting.default)


@dataclass(frozen=True)
class LaunchConfig:
    """Every setting of one run; each field's default is the one SETTINGS declares."""

    model: str = _declared("model")
    python: str = _declared("python")
    intra: int = _declared("intra")  # 0 = TensorFlow's default
    inter: int = _declared("inter")
    xla_auto: bool = _declared("xla_auto")
    jit_compile: bool = _declared("jit_compile")
    onednn: bool | None = _declared("onednn")  # None = TensorFlow's default
    log_level: int | None = _declared("log_level")
    visible_gpus: tuple[int, ...] | None = _declared("visible_gpus")  # None = all
    memory_growth: bool = _declared("memory_growth")
    memory_limit_mb: int | None = _declared("memory_limit_mb")
    allocator: str | None = _declared("allocator")  # None = the environment's
    cudnn_autotune: bool | None = _declared("cudnn_autotune")
    module_loading: str | None = _declared("module_loading")  # None = the driver's
    grappler: str | None = _declared("grappler")  # None = TensorFlow's graph optimisation
    cuda_cache: str | None = _declared("cuda_cache")  # None = the driver's own folder
    xla_cache: bool = _declared("xla_cache")
    page_cache: str = _declared("page_cache")
    nvtx: bool = _declared("nvtx")
    batch: int = _declared("batch")
    inputs: dict[str, str] = _declared("inputs")  # input name -> "D1xD2[:dtype]", no batch
    signature: str = _declared("signature")  # a SavedModel's signature; "" = serving_default or the only one
    imports: tuple[str, ...] = _declared("imports")  # modules or .py files imported before load (runs their code)
    unsafe_deserialization: bool = _declared("unsafe_deserialization")  # Keras safe mode off: Lambda layers run code
    steady: int = _declared("steady")
    call: str = _declared("call")  # how the probe calls the model
    # The subject is a model unless a program is given: the user's own argv, observed by
    # the launch hook, in its working folder, measured to its `until` point.
    program: tuple[str, ...] = _declared("program")
    workdir: str = _declared("workdir")
    until: str = _declared("until")
    extra_env: dict[str, str] = _declared("extra_env")
    timeout: float = _declared("timeout")

    def __post_init__(self) -> None:
        # --until mark:NAME means the mark as the program's mark() spells it, wherever it is set.
        if isinstance(self.until, str) and self.until.startswith("mark:"):
            object.__setattr__(self, "until", normal_until(self.until))

    @property
    def is_program(self) -> bool:
        return bool(self.program)

    @property
    def subject_type(self) -> Subject:
        """What a run of it measures, as a value: the model, or the program (subject.py)."""
        return Subject.of(self.program)

    @property
    def subject(self) -> str:
        """What is measured, in a few words: the model, or the program's command line."""
        if not self.program:
            return self.model
        return shlex.join(_short_arg(a) for a in self.program)  # quotes kept: it reads as it was typed

    def replace(self, **changes: Any) -> LaunchConfig:
        return replace(self, **changes)

    def validate(self, *, check_model: bool = True) -> list[Problem]:
        """Everything wrong with these settings; `check_model=False` for a user's script,
        which brings its own model."""
        undecodable = _undecodable_problems(self)
        if undecodable:  # nothing else can be judged (or stored) on such a path
            return undecodable
        problems = _model_problems(self.model) if check_model and not self.program else []
        problems += _program_problems(self)
        problems += _python_problems(self.python)
        problems += _count_problems(self)
        if self.memory_limit_mb is not None and (not isinstance(self.memory_limit_mb, int)
                                                 or self.memory_limit_mb <= 0):
            problems.append(Problem("memory_limit_mb", "The GPU memory limit must be a positive number of MiB."))
        if self.memory_limit_mb and self.memory_growth:
            problems.append(Problem(
                "memory_limit_mb",
                "TensorFlow cannot combine memory growth with a memory limit; choose one.",
            ))
        problems += _choice_problems(self)
        if self.visible_gpus is not None and any(not isinstance(i, int) or i < 0 for i in self.visible_gpus):
            problems.append(Problem("visible_gpus", "GPU indices are whole numbers from 0."))
        problems += _env_problems(self.extra_env)
        problems += _input_problems(self.inputs)
        problems += _import_problems(self.imports)
        if not isinstance(self.signature, str) or any(c.isspace() for c in self.signature):
            problems.append(Problem("signature", f"A signature is a name without spaces, not {self.signature!r}."))
        if not isinstance(self.timeout, (int, float)) or not math.isfinite(self.timeout) or self.timeout <= 0:
            problems.append(Problem("timeout", "The timeout must be a positive number of seconds."))
        return problems

    def summary(self) -> str:
        """Short text of the settings that differ from defaults, for lists and titles."""
        default = LaunchConfig()
        parts = []
        for f in fields(self):
            if f.name in ("model", "python", "timeout", "program", "workdir"):
                continue
            value = getattr(self, f.name)
            if value != getattr(default, f.name):
                parts.append(f"{f.name}={short_value(value)}")
        if self.python != default.python:
            parts.append(f"python={self.python}")
        return " ".join(parts) or "defaults"

    def changed_settings(self) -> list[str]:
        """Names of the fields that differ from the defaults, in declaration order."""
        default = LaunchConfig()
        return [f.name for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["visible_gpus"] is not None:
            data["visible_gpus"] = list(data["visible_gpus"])
        data["imports"] = list(data["imports"])
        data["program"] = list(data["program"])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LaunchConfig:
        """Build from stored data, ignoring keys this version does not know."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if "xla" in data and "xla_auto" not in data:
            # Before the split, `xla` measured both auto-clustering and jit_compile.
            values["xla_auto"] = values["jit_compile"] = bool(data["xla"])
        if values.get("visible_gpus") is not None:
            values["visible_gpus"] = tuple(int(i) for i in values["visible_gpus"])
        if "extra_env" in values:
            values["extra_env"] = {str(k): str(v) for k, v in dict(values["extra_env"]).items()}
        if "inputs" in values:
            values["inputs"] = {str(k): str(v) for k, v in dict(values["inputs"]).items()}
        if "imports" in values:
            imports = values["imports"]
            values["imports"] = (imports,) if isinstance(imports, str) else tuple(str(i) for i in imports)
        if "program" in values:
            program = values["program"]
            values["program"] = (program,) if isinstance(program, str) else tuple(str(a) for a in program or ())
        for setting in SETTINGS:  # a word or a path, whatever the file holds
            if isinstance(setting.default, str) and values.get(setting.name) is not None:
                values[setting.name] = str(values[setting.name])
        return cls(**values)


def _count_problems(config: LaunchConfig) -> list[Problem]:
    problems = []
    for setting in SETTINGS:
        if setting.kind is Kind.COUNT and setting.bounds is not None:
            value, (low, high) = getattr(config, setting.name), setting.bounds
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                hint = f" ({low} leaves TensorFlow's default)" if setting.unset and setting.unset[0] == TF_DECIDES \
                    else ""
                problems.append(Problem(setting.name, f"{setting.label} must be a whole number from {low} to {high}"
                                                      f"{hint}, not {value!r}."))
    return problems


def _choice_problems(config: LaunchConfig) -> list[Problem]:
    """Each word setting's value is one of its choices (or None where that is the default);
    `until` takes mark:NAME too, which _program_problems judges."""
    problems = []
    for setting in SETTINGS:
        if setting.kind is Kind.CHOICE and setting.name != "until":
            value = getattr(config, setting.name)
            if not (value is None and setting.default is None) and value not in list(setting.choices):
                problems.append(Problem(setting.name, f"{setting.label} is one of {', '.join(setting.words())}, "
                                                      f"not {value!r}."))
    return problems


def _undecodable_problems(config: LaunchConfig) -> list[Problem]:
    """Paths and arguments that were not valid UTF-8 (Python keeps such bytes as surrogates):
    the history stores settings as text, so they are refused here with the byte shown."""
    for name in ("model", "python", "workdir", "program", "imports", "extra_env", "inputs", "signature"):
        value = getattr(config, name)
        texts = [*value.keys(), *value.values()] if isinstance(value, dict) else \
            list(value) if isinstance(value, (tuple, list)) else [value]
        for text in texts:
            if isinstance(text, str) and _has_surrogate(text):
                return [Problem(name, f"{shown(text)} is not valid UTF-8 text: tflaunch keeps paths and arguments as "
                                      "text in its history. Rename the file or folder with UTF-8 characters.")]
    return []


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _short_arg(arg: str) -> str:
    """An argument as a title shows it: a path by its last two parts."""
    parts = arg.split(os.sep)
    return os.sep.join(parts[-2:]) if len(parts) > 2 else arg


def valid_until(until: str) -> bool:
    return until in UNTIL_POINTS or (until.startswith("mark:") and bool(NAME.match(until[5:])))


def _program_problems(config: LaunchConfig) -> list[Problem]:
    problems = []
    if not isinstance(config.until, str) or not valid_until(config.until):
        problems.append(Problem("until", f"Until is one of {', '.join(UNTIL_POINTS)} or mark:NAME (a name of "
                                         f"lowercase letters, digits and _), not {config.until!r}."))
    if config.jit_compile and config.call != "function" and not config.program:
        problems.append(Problem("call", "Compiling the model with XLA (jit_compile) needs call=function: XLA "
                                        "compiles the function tflaunch traces. Choose one of the two."))
    if config.program and any("\0" in a for a in config.program):
        problems.append(Problem("program", "A program's arguments cannot contain a NUL character."))
    if config.workdir and not os.path.isdir(os.path.expanduser(config.workdir)):
        problems.append(Problem("workdir", f"The working folder {config.workdir} does not exist. Choose an "
                                           "existing folder, or leave it empty for the current one."))
    return problems


def _env_problems(extra_env: dict[str, str]) -> list[Problem]:
    bad_names = [k for k in extra_env if not _ENV_NAME.match(k)]
    if bad_names:
        return [Problem("extra_env", f"Not a valid environment variable name: {bad_names[0]!r}.")]
    owned = [k for k in extra_env if k in MANAGED_VARIABLES]
    if owned:
        name = owned[0]
        return [Problem("extra_env", f"{name} is set by the {MANAGED_VARIABLES[name]} setting; "
                                     f"use that setting instead of an extra variable.")]
    if any("\0" in v for v in extra_env.values()):
        return [Problem("extra_env", "An environment variable's value cannot contain a NUL character.")]
    return []


def _input_problems(inputs: dict[str, str]) -> list[Problem]:
    for name, text in inputs.items():
        try:
            parse_input(f"{name}={text}")
        except InputSpecError as exc:
            return [Problem("inputs", f"Input shape {name} = {text}: {exc}.")]
    return []


def _import_problems(imports: tuple[str, ...]) -> list[Problem]:
    for target in imports:
        if not target.strip():
            return [Problem("imports", "An import cannot be empty; give a module name or a .py file.")]
        if is_file(target) and not os.path.isfile(os.path.expanduser(target)):
            return [Problem("imports", f"Import {target}: there is no such file. Give a .py file or the "
                                       "name of a module installed in that environment.")]
    return []


def _model_problems(model: str) -> list[Problem]:
    if not model:
        return [Problem("model", "Choose a model: a SavedModel folder, a .keras or .h5 file, FILE.py:FUNCTION "
                                 "or a sample.")]
    if model.startswith("sample:"):
        name = model[len("sample:"):]
        if name not in SAMPLE_MODELS:
            choices = ", ".join(f"sample:{s}" for s in SAMPLE_MODELS)
            return [Problem("model", f"There is no built-in sample '{name}'. Choose one of: {choices}.")]
        return []
    try:
        check_model_path(model)
    except ProbeFailure as failure:
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
