"""The doctor's cache-pack arms: the pack (TensorFlow's persistent XLA cache; on a GPU with
XLA's autotune cache), and on a GPU XLA's autotune levels 1-3, each measured on the program.

A pack is filled once and then read at every start, so its arm is measured in three parts:
the cold fill (the first run, with the pack empty, which compiles and writes), then the arm
and the baseline alternated, 3+ runs a side. Each is judged on the first step (where XLA
compiles) and on the steady step: a cure that slows every later step (autotune level 1 skips
the autotuner's search and picks slower kernels) is shown with its price and the step at which
it pays back. The runs use a scratch pack folder, emptied first, so the fill is measured
whatever the user's own pack holds, and the user's pack is never touched.

Whether the program uses XLA at all is read from its runs, not assumed: a fill run that looked
up no XLA program (TensorFlow's own lines) and wrote none does not; the reason is then said
from what the run reported (no GPU visible, op determinism on) and what Keras does.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..phases import FIRST, FIRST_STEP, TRACE
from ..run.driver import run_sessions
from ..run.record import RunRecord, RunStatus
from ..run.session import ProbeSession
from ..run.watcher import Watcher, Watchers
from ..settings.caches import PACKS_ENV
from ..settings.config import LaunchConfig
from ..store.recorder import RunRecorder
from ..units import format_bytes, format_duration
from .verdict import MIN_RUNS, Saving, saving

Say = Callable[[str], None]
STEADY_STEPS = 5  # steady steps each run measures, when the baseline asks for fewer
AUTOTUNE_LEVELS = (1, 2, 3)
NO_GPU = ("no GPU here (NVML found none): XLA's autotune cache and autotune levels 1-3 act on XLA's GPU "
          "autotuner only")


@dataclass
class PackArmResult:
    """One arm: its first steps and steady steps beside the baseline's, and their verdicts."""

    key: str  # "xla_cache=on", "autotune_level=1"
    config: LaunchConfig
    first: list[float] = field(default_factory=list)
    steady: list[float] = field(default_factory=list)
    first_saving: Saving | None = None
    steady_saving: Saving | None = None  # positive: faster steps
    failure: str | None = None

    @property
    def recommended(self) -> bool:
        """A real first-step saving that the steady step does not take back."""
        return (self.first_saving is not None and self.first_saving.significant
                and (self.steady_saving is None or not self.steady_saving.costly))

    def price(self) -> str:
        """What it costs in training, and after how many steps that cost eats the saving."""
        s, f = self.steady_saving, self.first_saving
        if s is None:
            return "steady step not measured"
        if not s.costly:
            return f"steady step: {s.describe(of='steady step')[len('measured: '):] if s.significant else 'no change'}"
        per_step = -s.seconds
        payback = "" if f is None or f.seconds <= 0 else (
            f"; the first step's saving is spent after {int(f.seconds / per_step) + 1} steps")
        return f"every later step {format_duration(per_step)} slower{payback}"


@dataclass
class PackDiagnosis:
    """What the pack arms measured, or why they were not."""

    baseline_first: list[float] = field(default_factory=list)
    baseline_steady: list[float] = field(default_factory=list)
    arms: list[PackArmResult] = field(default_factory=list)
    fill_first: float | None = None  # the cold fill's first step, seconds
    fill_bytes: int = 0  # what the fill wrote
    fill_entries: int = 0
    uses_xla: bool | None = None
    note: str | None = None  # why nothing was measured (the program does not use XLA, and why)
    skipped: dict[str, str] = field(default_factory=dict)  # arm: why it was not measured here

    def fill_sentence(self) -> str | None:
        if self.fill_first is None:
            return None
        base = statistics.median(self.baseline_first) if self.baseline_first else None
        more = None if base is None else self.fill_first - base
        extra = "" if more is None else (f" ({format_duration(abs(more))} {'more' if more >= 0 else 'less'} than the "
                                         "median run without the pack: the compile, and writing it)")
        return (f"The cold fill (the first run, pack empty) took {format_duration(self.fill_first)} to its first "
                f"step{extra} and wrote {self.fill_entries} XLA program{'s' if self.fill_entries != 1 else ''}, "
                f"{format_bytes(self.fill_bytes)}.")


def first_step(record: RunRecord) -> float | None:
    """The first step (a program's; its first inference when it does not train) or the trace and
    first call (a model's): where XLA compiles."""
    names = ((FIRST_STEP,) if FIRST_STEP in record.phases else (FIRST,)) if record.is_program \
        else (TRACE, FIRST)
    parts = [record.phases[n].duration for n in names if n in record.phases]
    return sum(p for p in parts if p is not None) if parts and None not in parts else None


def steady_step(record: RunRecord) -> float | None:
    value = record.latency.get("median")
    return float(value) if isinstance(value, (int, float)) else None


def no_xla_reason(record: RunRecord, config: LaunchConfig) -> str:
    """Why a program compiled nothing with XLA, from what its run reported."""
    how = ("TensorFlow's own lines" if record.config.log_level in (None, 0)
           else "the pack's files: the log level hides TensorFlow's lines")
    said = [f"its run looked up no XLA program and wrote none to the pack ({how}), so nothing it runs is compiled "
            "with XLA and a pack has nothing to keep"]
    gpus = record.environment.gpus
    env = {**os.environ, **config.extra_env}
    if env.get("TF_DETERMINISTIC_OPS", "").lower() in ("1", "true"):
        said.append("op determinism is on (TF_DETERMINISTIC_OPS), which turns Keras's XLA off")
    if gpus is not None and not gpus:
        said.append("it saw no GPU, and Keras 3 compiles fit with XLA by default (jit_compile=\"auto\") only with "
                    "a GPU visible")
    else:
        said.append("with a GPU, Keras 3 still leaves XLA off under a tf.distribute strategy, with op determinism "
                    "on, or when a layer does not support it (a cuDNN LSTM/GRU, lookups, random augmentation)")
    if env.get("TF_USE_LEGACY_KERAS") == "1":
        said.append("it runs tf-keras (TF_USE_LEGACY_KERAS=1), which uses XLA only when asked")
    said.append("ask for XLA in your code (model.compile(jit_compile=True), @tf.function(jit_compile=True)) or "
                "measure the xla_auto remedy")
    return "; ".join(said)


@contextmanager
def scratch_packs() -> Iterator[str]:
    """Packs in a scratch folder while the arms run: the fill is measured from empty, and the
    user's own packs are left as they are."""
    before = os.environ.get(PACKS_ENV)
    with tempfile.TemporaryDirectory(prefix="tflaunch-doctor-pack-") as folder:
        os.environ[PACKS_ENV] = folder
        try:
            yield folder
        finally:
            if before is None:
                os.environ.pop(PACKS_ENV, None)
            else:
                os.environ[PACKS_ENV] = before


def arms_for(base: LaunchConfig, has_gpu: bool) -> tuple[list[tuple[str, LaunchConfig]], dict[str, str]]:
    """The pack arms that apply here, and those that do not, with why."""
    arms = [("xla_cache=on", base.replace(xla_cache=True))]
    skipped: dict[str, str] = {}
    for level in AUTOTUNE_LEVELS:
        key = f"autotune_level={level}"
        if not has_gpu:
            skipped[key] = NO_GPU
            continue
        flags = " ".join([*base.extra_env.get("XLA_FLAGS", "").split(), f"--xla_gpu_autotune_level={level}"])
        arms.append((key, base.replace(extra_env={**base.extra_env, "XLA_FLAGS": flags})))
    if not has_gpu:
        skipped["autotune cache"] = NO_GPU
    return arms, skipped


def measure(base: LaunchConfig, repeat: int, say: Say, recorder: RunRecorder, watcher: Watcher | None,
            has_gpu: bool) -> PackDiagnosis:
    """The cold fill, then each arm against the baseline, alternated, `repeat` runs a side."""
    base = base.replace(steady=max(base.steady, STEADY_STEPS))
    arms, skipped = arms_for(base, has_gpu)
    result = PackDiagnosis(skipped=skipped)
    if not base.is_program and not base.jit_compile and not base.xla_auto:
        result.uses_xla = False
        result.note = ("the model is called without XLA here (jit_compile and xla_auto off), so a pack has nothing "
                       "to keep: the jit_compile and xla_auto remedies measure XLA with and without it")
        return result
    watchers = Watchers(recorder, watcher) if watcher is not None else recorder

    def one(config: LaunchConfig) -> RunRecord:
        return run_sessions([ProbeSession(config)], watchers)[0]

    with scratch_packs():
        say("the cache pack: one cold fill (the pack empty), then the pack against your settings, "
            f"{repeat} runs each, alternated")
        fill = one(arms[0][1])
        if fill.status is not RunStatus.OK:
            result.note = f"the fill run failed: {fill.headline}"
            return result
        pack = fill.cache_pack
        added = (pack.after.entries or 0) if pack is not None else 0
        looked_up = pack is not None and bool(pack.hits or pack.misses)
        result.uses_xla = added > 0 or looked_up
        if not result.uses_xla:
            result.note = "the program does not use XLA: " + no_xla_reason(fill, base)
            return result
        result.fill_first, result.fill_entries = first_step(fill), added
        result.fill_bytes = (pack.after.size or 0) if pack is not None else 0
        results = [PackArmResult(key, config) for key, config in arms]
        for round_ in range(max(repeat, MIN_RUNS)):
            order = [None, *results] if round_ % 2 == 0 else [*results, None]
            for arm in order:
                record = one(base if arm is None else arm.config)
                if record.status is not RunStatus.OK:
                    if arm is not None:
                        arm.failure = arm.failure or record.headline
                    continue
                first, steady = first_step(record), steady_step(record)
                firsts = result.baseline_first if arm is None else arm.first
                steadies = result.baseline_steady if arm is None else arm.steady
                if first is not None:
                    firsts.append(first)
                if steady is not None:
                    steadies.append(steady)
    for arm in results:
        arm.first_saving = saving(arm.first, result.baseline_first)
        arm.steady_saving = saving(arm.steady, result.baseline_steady)
    result.arms = results
    return result
