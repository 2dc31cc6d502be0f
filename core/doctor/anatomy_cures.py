"""The doctor's anatomy remedy: the cures a first step's parts call for, as arms to measure.

The anatomy (an extra, profiled run, run/anatomy.py) only chooses what to measure: each arm
is then A/B-measured on the user's own program or model like every other arm (interleaved
runs, a saving with its interval), never credited with a part's size. A part too small to
matter chooses nothing: under MIN_SHARE of the window or MIN_SECONDS, a cure could save at
most that much, which is well within a first step's run-to-run spread (on a shared 2-core
machine the doctor's five baseline runs of tests/programs/fit_tfdata.py's first step ranged
1.75-2.33 s, -18 % to +9 % of their median), so 3-5 runs a side could not tell it from noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..run.anatomy import Anatomy, AnatomyPart, part_label
from ..settings.config import LaunchConfig
from ..units import format_duration

MIN_SHARE = 0.05
MIN_SECONDS = 0.05


@dataclass(frozen=True)
class Cure:
    key: str  # the arm's key, as the doctor's table shows it
    changes: dict[str, Any]  # LaunchConfig fields the arm sets
    gpu: bool = False  # acts only where a GPU is


# Launch settings that act on each part; a part not here has none (tracing, variables, data
# and execution are the program's own code: retraces, input pipelines, model size).
CURES: dict[str, tuple[Cure, ...]] = {
    "instantiation": (Cure("grappler=light", {"grappler": "light"}), Cure("grappler=off", {"grappler": "off"})),
    "xla": (Cure("xla_cache=on", {"xla_cache": True}),),
    "gpu_autotune": (Cure("cudnn_autotune=off", {"cudnn_autotune": False}, gpu=True),),
    "gpu_modules": (Cure("cuda_cache=warm", {"cuda_cache": "warm"}, gpu=True),
                    Cure("module_loading=lazy", {"module_loading": "lazy"}, gpu=True)),
    "gpu_allocator": (Cure("allocator=cuda_malloc_async", {"allocator": "cuda_malloc_async"}, gpu=True),
                      Cure("memory_growth=on", {"memory_growth": True}, gpu=True)),
}


def large_parts(anatomy: Anatomy) -> list[AnatomyPart]:
    """The parts big enough to be worth a cure, largest first."""
    window = anatomy.window
    return sorted((p for p in anatomy.parts if p.seconds >= MIN_SECONDS and window and p.seconds / window >= MIN_SHARE),
                  key=lambda p: -p.seconds)


@dataclass(frozen=True)
class Chosen:
    key: str
    part: str
    config: LaunchConfig
    part_seconds: float


def choose(base: LaunchConfig, anatomy: Anatomy | None, has_gpu: bool) -> tuple[list[Chosen], list[str]]:
    """The arms the anatomy calls for, and why each part chose none (in words)."""
    if anatomy is None or anatomy.error is not None:
        return [], [f"no anatomy: {anatomy.error if anatomy is not None else 'the profiled run gave none'}"]
    chosen: list[Chosen] = []
    notes: list[str] = []
    for part in large_parts(anatomy):
        name, size = part.key, part.seconds
        cures = CURES.get(name, ())
        if not cures:
            notes.append(f"{part_label(name)}, {format_duration(size)}: no launch setting acts on it")
            continue
        for cure in cures:
            if cure.gpu and not has_gpu:
                notes.append(f"{cure.key} for {part_label(name)}: no GPU here (NVML found none)")
                continue
            config = base.replace(**cure.changes)
            if config == base:
                notes.append(f"{cure.key} for {part_label(name)}: the baseline has it already")
                continue
            chosen.append(Chosen(cure.key, name, config, size))
    small = [p for p in anatomy.parts if p not in large_parts(anatomy)]
    if small:
        notes.append("too small to matter (under {:.0%} of the window or {}): {}".format(
            MIN_SHARE, format_duration(MIN_SECONDS), ", ".join(part_label(p.key) for p in small)))
    return chosen, notes
