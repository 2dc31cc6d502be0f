"""The doctor's experiment: every remedy that applies, measured against the baseline on the
user's model, then the significant ones combined and verified against the baseline again.

The arms run as one sweep (baseline first, every arm and the baseline interleaved in a
shuffled order each round, one warm-up round, no racing: every arm gets all its runs), so
they share the sweeps' engine, storage and review; a warm start is measured apart, as the
command the doctor advises against the user's own, alternated (warm_arm.py).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

from ..paths import cache_dir
from ..run.anatomy import Anatomy
from ..run.driver import run_sessions
from ..run.formats import in_formats
from ..run.gpus.kernels import predict
from ..run.gpus.nvml import GpuInventory, GpuMemorySampler, machine_gpus
from ..run.import_facts import ImportFacts
from ..run.interpreters.build_info import build_info
from ..run.record import RunRecord, RunStatus
from ..run.session import ProbeSession
from ..run.watcher import Watcher
from ..settings.config import LaunchConfig
from ..store.history import History, HistoryError
from ..store.recorder import RunRecorder
from ..sweep.plan import ARMS_AXIS, Candidate, Sweep, SweepPlan, Trial
from ..sweep.session import SweepSession, run_headless
from .cuda_cache import cost_sentence, jit_cards
from .pack_arm import PackDiagnosis
from .pack_arm import measure as measure_pack
from .pack_report import recommended as pack_recommended
from .remedies import Arm, Examination, combine, examine, pyc_missing
from .verdict import Saving, saving
from .warm_arm import WarmArm
from .warm_arm import measure as measure_warm

Say = Callable[[str], None]


class DoctorError(Exception):
    """The doctor cannot examine this model; the message says why and what to do."""


@dataclass
class ArmResult:
    arm: Arm
    values: list[float]
    failures: int = 0
    failure: str | None = None
    saving: Saving | None = None
    objective: str = "ready"  # what its values measure: time to ready, or phase:NAME (an anatomy arm)


@dataclass
class Diagnosis:
    exam: Examination
    baseline: list[float] = field(default_factory=list)
    part_baseline: list[float] = field(default_factory=list)  # the baseline's anatomy phase, beside the anatomy arms
    results: list[ArmResult] = field(default_factory=list)
    warm: Saving | None = None
    warm_note: str | None = None  # why warm start was not measured
    warm_arm: WarmArm | None = None  # the command advised for warm start, as measured
    pack: PackDiagnosis | None = None  # the cache pack's arms (None: not asked for)
    warm_with_pack: bool = False  # warm start measured with the pack on both sides (it helped)
    kernel_notes: list[str] = field(default_factory=list)  # JIT-compiled kernels here, with their measured cost
    combined: LaunchConfig | None = None
    combined_keys: list[str] = field(default_factory=list)
    verification: Saving | None = None
    sweep_ids: list[int] = field(default_factory=list)

    @property
    def recommended(self) -> list[ArmResult]:
        """The best significant arm of each remedy, best saving first."""
        best: dict[str, ArmResult] = {}
        for r in self.results:
            if r.saving is not None and r.saving.significant:
                kept = best.get(r.arm.remedy)
                if kept is None or (kept.saving is not None and r.saving.seconds > kept.saving.seconds):
                    best[r.arm.remedy] = r
        return sorted(best.values(), key=lambda r: -(r.saving.seconds if r.saving else 0))

    @property
    def verified(self) -> bool:
        return self.verification is not None and self.verification.significant


def diagnose(base: LaunchConfig, *, repeat: int = 5, only: set[str] | None = None, history: History | None = None,
             say: Say = lambda _: None, on_trial: Callable[[Sweep, Trial, float | None], None] | None = None,
             watcher: Watcher | None = None) -> Diagnosis:
    """Examine `base`, measure each remedy that applies, combine and verify the gains."""
    say(f"examining {base.subject}: one run with your settings")
    recorder = RunRecorder(history, "doctor")
    first = _one_run(base, recorder, watcher)
    if first.status is not RunStatus.OK:
        raise DoctorError(f"the model does not run with these settings, so there is nothing to compare: "
                          f"{first.headline}")
    gpus = machine_gpus()
    xray = _import_xray(base, first, only, recorder, watcher, say)
    anatomy = _anatomy(base, recorder, watcher, say) if only is None or "anatomy" in only else None
    exam = examine(base, first, gpus.available, only, _pyc_prefix(base, xray, say), imports=xray, anatomy=anatomy)
    diagnosis = Diagnosis(exam, kernel_notes=kernel_lines(base, gpus) if gpus.available else [])
    arms = _with_model_files(exam.arms, base, say)
    # An arm the anatomy chose is measured on the phase its part is in (the first step, or the
    # first call), where its saving is not lost in the import's run-to-run spread.
    phase = exam.anatomy.phase if exam.anatomy is not None else None
    part_phase = f"phase:{phase}" if phase else "ready"
    for group, objective in (([a for a in arms if not a.part], "ready"), ([a for a in arms if a.part], part_phase)):
        if not group:
            continue
        what = "time to ready" if objective == "ready" else f"the {(phase or '').replace('_', ' ')} phase"
        say(f"measuring {len(group)} arm{'s' if len(group) > 1 else ''} against the baseline on {what}, {repeat} "
            "runs each, interleaved")
        sweep, sweep_id = _sweep(base, [(a.key, a.config) for a in group], repeat, history, on_trial, objective)
        diagnosis.sweep_ids += [sweep_id] if sweep_id is not None else []
        baseline = list(sweep.values["baseline"])
        if objective == "ready":
            diagnosis.baseline = baseline
        else:
            diagnosis.part_baseline = baseline
        for arm in group:
            values = list(sweep.values[arm.key])
            diagnosis.results.append(ArmResult(arm, values, sweep.failures[arm.key], sweep.first_failure.get(arm.key),
                                               saving(values, baseline), objective))
    if only is None or "pack" in only:
        diagnosis.pack = measure_pack(base, repeat, say, recorder, watcher, gpus.available)
    if only is None or "warm" in only:
        # With a pack that helps, warm start is measured with it on both sides: the profile the
        # advice names then starts warm with the pack, the two as one cure.
        diagnosis.warm_with_pack = bool(pack_recommended(diagnosis.pack)) and not base.xla_cache
        warm = measure_warm(base.replace(xla_cache=True) if diagnosis.warm_with_pack else base, repeat, say,
                            recorder, watcher)
        diagnosis.warm_arm, diagnosis.warm, diagnosis.warm_note = warm, warm.saving, warm.note
    launchable = [r.arm for r in diagnosis.recommended if r.arm.launchable]
    if (best := pack_recommended(diagnosis.pack)) and not any(a.config.xla_cache for a in launchable):
        launchable.append(Arm(best[0].key, "pack", best[0].config.replace(steady=base.steady)))
    if launchable:
        combined = combine(base, launchable)
        diagnosis.combined, diagnosis.combined_keys = combined, [a.key for a in launchable]
        say(f"verifying the combination ({', '.join(diagnosis.combined_keys)}) against the baseline")
        sweep, sweep_id = _sweep(base, [("combined", combined)], repeat, history, on_trial)
        diagnosis.sweep_ids += [sweep_id] if sweep_id is not None else []
        diagnosis.verification = saving(sweep.values["combined"], sweep.values["baseline"])
    return diagnosis


def _anatomy(base: LaunchConfig, recorder: RunRecorder, watcher: Watcher | None, say: Say) -> Anatomy | None:
    """The first step's (or first call's) parts, from one extra run with TensorFlow's profiler
    on: it chooses the anatomy's arms, and measures none of them."""
    what = base.subject_type.first_work
    say(f"one extra run with TensorFlow's profiler on: the anatomy of the {what}")
    record = _one_run(base, recorder, watcher, anatomy=True)
    return record.run_anatomy


def _one_run(config: LaunchConfig, recorder: RunRecorder, watcher: Watcher | None,
             anatomy: bool = False) -> RunRecord:
    from ..run.watcher import Watchers

    gpus = GpuMemorySampler()
    try:
        watchers = Watchers(recorder, watcher) if watcher is not None else recorder
        return run_sessions([ProbeSession(config, anatomy=anatomy)], watchers, gpus)[0]
    finally:
        gpus.close()


def _sweep(base: LaunchConfig, arms: list[tuple[str, LaunchConfig]], repeat: int, history: History | None,
           on_trial: Callable[[Sweep, Trial, float | None], None] | None,
           objective: str = "ready") -> tuple[Sweep, int | None]:
    plan = SweepPlan(base, {ARMS_AXIS: [key for key, _ in arms]}, repeat=repeat, warmup=1, racing=False,
                     objective=objective)
    candidates = [Candidate("baseline", base, baseline=True), *(Candidate(key, config) for key, config in arms)]
    try:
        session = SweepSession(plan, candidates, history)
    except HistoryError:
        session = SweepSession(plan, candidates, None)
    gpus = GpuMemorySampler()
    try:
        status = run_headless(session, on_trial, gpus)
    finally:
        gpus.close()
    if status == "cancelled":
        raise KeyboardInterrupt
    return session.sweep, session.sweep_id


def _with_model_files(arms: list[Arm], base: LaunchConfig, say: Say) -> list[Arm]:
    """Format arms with the model saved in their format (converted once, cached)."""
    formats = [a.key.split("=", 1)[1] for a in arms if a.remedy == "format"]
    if not formats:
        return arms
    say(f"saving {base.model} as {', '.join(formats)} (once; kept for later runs)")
    paths = in_formats(base.model, formats, base.python)
    return [Arm(a.key, a.remedy, base.replace(model=paths[a.key.split("=", 1)[1]]), a.launchable)
            if a.remedy == "format" else a for a in arms]


def _import_xray(base: LaunchConfig, first: RunRecord, only: set[str] | None, recorder: RunRecorder,
                 watcher: Watcher | None, say: Say) -> ImportFacts | None:
    """The import X-ray the .pyc verdict is judged from: the first run's (a model's probe takes
    one), else, for a program, one run of the probe with the same interpreter and settings
    (whether TensorFlow's .pyc files exist is the interpreter's, not the subject's). None when
    the .pyc remedy is not wanted or the X-ray could not be taken."""
    if first.imports is not None:
        return first.imports
    if only is not None and "pyc" not in only:
        return None
    say(f"taking an import X-ray of {base.python} for the .pyc verdict (one run of the probe, sample:mlp)")
    record = _one_run(base.replace(program=(), workdir="", model="sample:mlp", steady=1), recorder, watcher)
    return record.imports


def kernel_lines(base: LaunchConfig, gpus: GpuInventory) -> list[str]:
    """Each visible GPU whose kernels this TensorFlow JIT-compiles, with what a cold CUDA cache
    costs there as measured (tflaunch devices --measure-cuda-cache), or that it is not measured."""
    build = build_info(base.python, timeout=30)
    if not build.ok:
        return []
    visible = set(base.visible_gpus) if base.visible_gpus is not None else None
    return [f"GPU {gpu.index} ({gpu.name}): {predict(build.capabilities, gpu.compute_capability).message}; "
            f"{cost_sentence(build, gpus, gpu)}." for gpu in jit_cards(build, gpus)
            if visible is None or gpu.index in visible]


def _pyc_prefix(base: LaunchConfig, imports: ImportFacts | None, say: Say) -> str | None:
    """Where TensorFlow's modules are compiled for the .pyc arm, when they are missing;
    compiled into a folder of tflaunch's (PYTHONPYCACHEPREFIX), never into site-packages.
    None where the X-ray did not find TensorFlow's folder ("")."""
    facts = pyc_missing(imports)
    folder = facts.folder if facts is not None else ""
    if not folder:
        return None
    prefix = cache_dir() / "pyc" / hashlib.sha1(os.path.realpath(base.python).encode()).hexdigest()[:16]
    say(f"compiling TensorFlow's modules into {prefix} for the .pyc arm (once)")
    subprocess.run([base.python, "-m", "compileall", "-q", folder], env={**os.environ, "PYTHONPYCACHEPREFIX":
                                                                          str(prefix)},
                   capture_output=True, timeout=1800)
    return str(prefix)
