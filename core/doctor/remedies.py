"""The remedies the doctor knows, and which of them apply to one model on one machine.

Each remedy becomes one or more arms: the baseline's settings with one change. A remedy
that does not apply says why (no GPU here, the .pyc files are present, a model that has
no other format), so the report lists every remedy a user may have heard of.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..probe.model.convert import FORMATS
from ..probe.model.model_files import model_format
from ..report.imports import UNCOMPILED_SHARE
from ..run.anatomy import Anatomy
from ..run.import_facts import CompiledPackage, ImportFacts
from ..run.record import RunRecord
from ..run.storage.local_copy import local_copy
from ..run.storage.mounts import mount_of
from ..settings.config import LaunchConfig
from ..settings.vocabulary import SETTINGS
from ..subject import Subject
from .anatomy_cures import choose

REMEDIES: dict[str, str] = {
    "format": "model format (SavedModel, .keras, .h5)",
    "threads": "intra-op and inter-op threads",
    "onednn": "oneDNN on or off",
    "jit_compile": "compile the model with XLA (jit_compile)",
    "xla_auto": "XLA auto-clustering (TF_XLA_FLAGS, any program)",
    "pyc": "compiled .pyc files for TensorFlow",
    "warm": "warm start (tflaunch run --warm)",
    "gpu": "GPU caches and allocator",
    "preload": "preload the model's files into the page cache before the start (vmtouch -t)",
    "local_copy": "copy the model to a local disk first (a model on a network file system)",
    "pack": "the cache pack: TensorFlow's persistent XLA cache (on a GPU with XLA's autotune cache, and autotune "
            "levels 1-3), judged on the first step and the steady step, its cold fill measured",
    # Last: its arms join the ones above (one arm per key), each naming the part it acts on.
    "anatomy": "the first step's or first call's parts (one extra run with TensorFlow's profiler) and the "
               "launch settings that act on them",
}
# The cures of a cold start: measured only against a cold baseline (--page-cache cold).
STORAGE_REMEDIES = ("preload", "local_copy")


@dataclass(frozen=True)
class Arm:
    key: str  # "format=savedmodel", shown in the table
    remedy: str
    config: LaunchConfig
    # A launch can apply it (an environment variable, tf.config, a model file): it may go
    # into the combined profile. jit_compile changes the user's code, warm start the way
    # a script is started: recommended, not combined.
    launchable: bool = True
    how: str = ""  # what it takes, for an arm a launch cannot apply ("" = a change to your code)
    part: str = ""  # the anatomy's part it acts on ("" = not chosen by the anatomy)
    part_seconds: float | None = None  # that part's size in the anatomy run


@dataclass
class Examination:
    """What the doctor learned from one baseline run before choosing the arms."""

    base: LaunchConfig
    record: RunRecord
    has_gpu: bool
    cores: int
    arms: list[Arm] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # remedy: why it does not apply here
    # The import X-ray the .pyc verdict is judged from (one the doctor took); None: none taken.
    imports: ImportFacts | None = None
    anatomy: Anatomy | None = None  # the profiled run's parts (run/anatomy.py); None: no profiled run
    anatomy_notes: list[str] = field(default_factory=list)  # parts that chose no arm, and why


# What a launch cannot change in a program: its files and its code are its own. A remedy
# that is a setting a program does not read says so, and why, in the settings table.
_NOT_FOR_PROGRAMS = {
    "format": "a program loads its own files: convert them (tflaunch sample --format) and measure it again",
    **{s.name: s.unread_because for s in SETTINGS if s.name in REMEDIES and not s.reads(Subject.PROGRAM)},
    "preload": "a program's model files are its own, unknown to tflaunch: preload them in your start script "
               "(vmtouch -t FILES) and measure it again",
    "local_copy": "a program's model files are its own, unknown to tflaunch: copy them to a local disk in your "
                  "start script and measure it again",
}


def _format_of(model: str) -> str | None:
    """The model's saved format; "sample" (built from code, saved in any format on
    demand); None for a model your code builds, which has no saved form to change."""
    if model.startswith("sample:"):
        return "sample"
    fmt = model_format(model)
    return None if fmt in (None, "code") else fmt


def pyc_missing(imports: ImportFacts | None) -> CompiledPackage | None:
    """TensorFlow's X-ray facts when its .pyc files are missing (compiled at every import)."""
    facts = imports.compiled_of("tensorflow") if imports is not None else None
    if facts is None or not facts.checked:
        return None
    return facts if facts.uncached / facts.checked > UNCOMPILED_SHARE else None


def examine(base: LaunchConfig, record: RunRecord, has_gpu: bool, only: set[str] | None = None,
            pyc_prefix: str | None = None, local_root: Path | None = None,
            imports: ImportFacts | None = None, anatomy: Anatomy | None = None) -> Examination:
    """The arms to measure for `base`, from its first run `record`; `imports`, the import
    X-ray taken for the .pyc verdict (the first run's own when it has one); `anatomy`, an extra
    profiled run's parts, for the anatomy remedy."""
    exam = Examination(base, record, has_gpu, os.cpu_count() or 1, imports=imports or record.imports,
                       anatomy=anatomy)
    wanted = set(REMEDIES) if only is None else only
    for remedy in REMEDIES:
        if remedy not in wanted:
            exam.skipped[remedy] = "not chosen for this examination"
            continue
        why_not = _add_arms(exam, remedy, pyc_prefix, local_root)
        if why_not:
            exam.skipped[remedy] = why_not
    return exam


def not_for_programs(remedy: str) -> str | None:
    """Why a launch cannot apply `remedy` to a program (its files and code are its own), or None."""
    return _NOT_FOR_PROGRAMS.get(remedy)


def _add_arms(exam: Examination, remedy: str, pyc_prefix: str | None, local_root: Path | None = None) -> str | None:
    base, arms = exam.base, exam.arms
    if base.is_program and remedy in _NOT_FOR_PROGRAMS:
        return _NOT_FOR_PROGRAMS[remedy]
    if remedy == "xla_auto":
        if base.xla_auto:
            return "the baseline already has XLA auto-clustering on"
        arms.append(Arm("xla_auto=on", remedy, base.replace(xla_auto=True)))
        if not base.xla_cache:
            arms.append(Arm("xla_auto=on xla_cache=on", remedy, base.replace(xla_auto=True, xla_cache=True)))
        return None
    if remedy == "format":
        current = _format_of(base.model)
        if current is None:
            return "the model is built by your code (FILE.py:FUNCTION): it has no saved format to change"
        for fmt in FORMATS:
            if fmt != current:
                arms.append(Arm(f"format={fmt}", remedy, base))  # the path is filled in by the experiment
        return None
    if remedy == "threads":
        options = sorted({1, max(exam.cores // 2, 1), exam.cores} - {base.intra})
        for n in options:
            arms.append(Arm(f"intra={n}", remedy, base.replace(intra=n)))
        if base.inter != 1:
            arms.append(Arm("inter=1", remedy, base.replace(inter=1)))
        return None
    if remedy == "onednn":
        for value in (False, True):
            if base.onednn is not value:
                arms.append(Arm(f"onednn={'on' if value else 'off'}", remedy, base.replace(onednn=value)))
        return None
    if remedy == "jit_compile":
        if base.jit_compile:
            return "the baseline already compiles the model with XLA"
        arms.append(Arm("jit_compile=on", remedy, base.replace(jit_compile=True), launchable=False))
        if not base.xla_cache:
            arms.append(Arm("jit_compile=on xla_cache=on", remedy, base.replace(jit_compile=True, xla_cache=True),
                            launchable=False))
        return None
    if remedy == "pyc":
        if not exam.imports:
            return ("not judged: no import X-ray was taken (the run that takes one failed), so whether TensorFlow's "
                    ".pyc files are present is unknown")
        facts = pyc_missing(exam.imports)
        if facts is None:
            return "TensorFlow's .pyc files are present (the import X-ray found them compiled)"
        if not pyc_prefix:
            return "TensorFlow's .pyc files are missing, but there is no folder to compile them into"
        arms.append(Arm("pyc=compiled", remedy,
                        base.replace(extra_env={**base.extra_env, "PYTHONPYCACHEPREFIX": pyc_prefix})))
        return None
    if remedy in ("warm", "pack"):
        return None  # measured apart (warm_arm.py, pack_arm.py): a start command; a fill, then two phases
    if remedy in STORAGE_REMEDIES:
        return _storage_arms(exam, remedy, local_root)
    if remedy == "anatomy":
        return _anatomy_arms(exam)
    if remedy == "gpu":
        if not exam.has_gpu:
            return "no GPU here (NVML found none)"
        if base.cuda_cache != "warm":
            arms.append(Arm("cuda_cache=warm", remedy, base.replace(cuda_cache="warm")))
        if base.allocator != "cuda_malloc_async":
            arms.append(Arm("allocator=cuda_malloc_async", remedy, base.replace(allocator="cuda_malloc_async")))
        if base.cudnn_autotune is not False:
            arms.append(Arm("cudnn_autotune=off", remedy, base.replace(cudnn_autotune=False)))
        return None
    return f"unknown remedy {remedy}"


def _anatomy_arms(exam: Examination) -> str | None:
    """The arms the anatomy's large parts call for; an arm another remedy chose already is
    the same arm, now naming its part."""
    chosen, exam.anatomy_notes = choose(exam.base, exam.anatomy, exam.has_gpu)
    if not chosen:
        return "; ".join(exam.anatomy_notes) or "no part of the first step calls for a launch setting"
    for c in chosen:
        at = next((i for i, a in enumerate(exam.arms) if a.key == c.key), None)
        if at is None:
            exam.arms.append(Arm(c.key, "anatomy", c.config, part=c.part, part_seconds=c.part_seconds))
        else:
            exam.arms[at] = replace(exam.arms[at], part=c.part, part_seconds=c.part_seconds)
    return None


def _storage_arms(exam: Examination, remedy: str, local_root: Path | None) -> str | None:
    """A cure of a cold start, against a cold baseline; a launch does not apply it (your start
    script does), so it is recommended, never combined into a profile."""
    base = exam.base
    if base.page_cache != "cold":
        return ("the baseline starts with a warm page cache (page_cache=" + base.page_cache + "): its files are "
                "in memory already, so a storage cure has nothing to save; examine with --page-cache cold to "
                "measure the cures of a first start after boot")
    if base.model.startswith("sample:") or model_format(base.model) == "code":
        return "the model is built from code: it has no files to read"
    if remedy == "preload":
        exam.arms.append(Arm("page_cache=preloaded", remedy, base.replace(page_cache="preloaded"), launchable=False,
                             how=f"read the model into the page cache ahead of the start: vmtouch -t {base.model} "
                                 "(or cat its files > /dev/null) while the job waits for its node or data; the read "
                                 "itself is not in this figure"))
        return None
    mount = mount_of(base.model)
    if mount is None:
        return "the model's file system cannot be told (no /proc/self/mountinfo here)"
    if not mount.network:
        return (f"the model is on a local disk ({mount.describe()}): a copy would be read from the same kind of "
                "storage")
    try:
        copy = local_copy(base.model, local_root)
    except OSError as exc:
        return f"the model could not be copied to a local folder: {exc.strerror or exc}"
    exam.arms.append(Arm("local_copy", remedy, base.replace(model=copy), launchable=False,
                         how=f"copy the model from {mount.describe()} to a local disk in your start script and "
                             "load the copy"))
    return None


def combine(base: LaunchConfig, arms: list[Arm]) -> LaunchConfig:
    """One configuration with every arm's change (best arm per remedy, launchable only)."""
    config = base
    for arm in arms:
        for name in arm.config.changed_settings() + ["model"]:
            value = getattr(arm.config, name)
            if value != getattr(base, name) and name != "extra_env":
                config = config.replace(**{name: value})
        if arm.config.extra_env != base.extra_env:
            config = config.replace(extra_env={**config.extra_env, **arm.config.extra_env})
    return config
