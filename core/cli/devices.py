"""`tflaunch devices`: the GPUs here, each interpreter's TensorFlow build, and whether its
kernels run natively on each GPU or are JIT-compiled at start, with what a cold CUDA cache
costs on that card as measured there (--measure-cuda-cache measures it), never a guess.

The GPUs come from NVML, the builds from a child process of each interpreter: neither
imports TensorFlow here, and neither touches a GPU, unless --measure-cuda-cache is given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..doctor.cuda_cache import MeasureError, cost_sentence, jit_cards, measure
from ..run.gpus.kernels import Prediction, Verdict, cache_note, driver_note, predict
from ..run.gpus.nvml import Gpu, GpuInventory, inventory
from ..run.interpreters.build_info import BuildInfo, build_info
from ..store.cuda_cache_costs import CostStore, cost_key
from ..units import format_bytes
from .arguments import positive_int
from .numbers import decimal


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    devices = sub.add_parser("devices", help="GPUs, TensorFlow's CUDA build, and whether its kernels are native on "
                             "each GPU or JIT-compiled at start")
    devices.add_argument("--python", action="append", metavar="PATH",
                         help="an interpreter whose TensorFlow to check (repeatable; default: this one)")
    devices.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                         help="how long each interpreter may take to answer (default 60)")
    devices.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
    devices.add_argument("--measure-cuda-cache", action="store_true",
                         help="on each GPU model whose kernels are JIT-compiled, measure what a cold CUDA cache costs "
                              "(runs of sample:mlp with the cache empty and kept) and remember it")
    devices.add_argument("--pairs", type=positive_int, default=1, metavar="N",
                         help="cold/warm pairs for --measure-cuda-cache (default 1; 3 or more give medians)")


def _seconds(text: str) -> float:
    try:
        value = decimal(text)
    except argparse.ArgumentTypeError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    gpus = inventory()
    builds = [build_info(python, args.timeout) for python in args.python or [sys.executable]]
    env = dict(os.environ)
    if args.measure_cuda_cache and (code := _measure(gpus, builds, args.pairs)):
        return code
    if args.json:
        print(json.dumps(devices_json(gpus, builds, env), indent=2))
    else:
        print(devices_text(gpus, builds, env))
    for build in builds:
        if not build.ok:
            print(f"tflaunch: {build.message}", file=sys.stderr)
    return 0 if all(b.ok for b in builds) else 1


def _measure(gpus: GpuInventory, builds: list[BuildInfo], pairs: int) -> int:
    """Measure each (interpreter, JIT card model) pair; 0, or 1 when a measurement failed."""
    if not gpus.available:
        print(f"tflaunch: no GPU to measure the CUDA cache on: {gpus.reason}", file=sys.stderr)
        return 1
    failed = False
    for build in builds:
        cards = jit_cards(build, gpus) if build.ok else []
        if build.ok and not cards:
            print(f"tflaunch: {build.python}: no GPU here JIT-compiles its kernels; nothing to measure",
                  file=sys.stderr)
        for gpu in cards:
            try:
                cost = measure(build, gpus, gpu, pairs, say=lambda text: print(f"tflaunch: {text}", file=sys.stderr))
            except (MeasureError, OSError) as exc:
                print(f"tflaunch: the CUDA cache was not measured: {exc}", file=sys.stderr)
                failed = True
                continue
            print(f"tflaunch: GPU {gpu.index}: {cost.sentence()}", file=sys.stderr)
    return 1 if failed else 0


def predictions(gpus: GpuInventory, build: BuildInfo) -> list[tuple[Gpu, Prediction, str | None]]:
    """(GPU, what happens to it with this build, a note on the driver) for each GPU."""
    out = []
    for gpu in gpus.gpus:
        prediction = predict(build.capabilities, gpu.compute_capability, build.is_cuda_build)
        cuda = build.info.get("cuda_version")
        out.append((gpu, prediction, driver_note(gpus.cuda_driver, None if cuda is None else str(cuda),
                                                 prediction.verdict)))
    return out


def _gpu_line(gpu: Gpu) -> list[str]:
    cc = f"compute capability {gpu.compute_capability[0]}.{gpu.compute_capability[1]}" \
        if gpu.compute_capability else "compute capability unknown"
    used = f", {format_bytes(gpu.memory_used)} in use" if gpu.memory_used is not None else ""
    persistence = {True: "persistence mode on", False: "persistence mode off", None: "persistence mode unknown"}
    lines = [f"  GPU {gpu.index}: {gpu.name}, {cc}, {format_bytes(gpu.memory_total)} memory{used}, "
             f"{persistence[gpu.persistence_mode]}"]
    if gpu.uuid:
        lines.append(f"         {gpu.uuid}")
    if gpu.persistence_mode is False:
        lines.append("         (each start that finds no program using the GPU loads the driver again, which "
                     "takes seconds: `sudo nvidia-smi -pm 1` keeps it loaded)")
    return lines


def _build_line(build: BuildInfo) -> str:
    """Python 3.11.7, TensorFlow 2.21.0: CUDA build (CUDA 12.5.1, cuDNN 9); native kernels for ..."""
    info = build.info
    if not build.is_cuda_build:
        kind = "ROCm build" if info.get("is_rocm_build") else "CPU-only build (is_cuda_build False)"
        return f"  {build.message}: {kind}"
    line = f"  {build.message}: CUDA build (CUDA {info.get('cuda_version')}, cuDNN {info.get('cudnn_version')})"
    cubins = [c for c in build.capabilities if c.startswith("sm_")]
    ptx = [c for c in build.capabilities if c.startswith("compute_")]
    return line + (f"; native kernels for {', '.join(cubins)}" if cubins else "") + (
        f"; PTX for {', '.join(ptx)}" if ptx else "") + ("" if cubins or ptx else "; no compute capabilities listed")


def devices_text(gpus: GpuInventory, builds: list[BuildInfo], env: dict[str, str]) -> str:
    if gpus.available:
        cuda = f", CUDA {gpus.cuda_driver}" if gpus.cuda_driver else ""
        lines = [f"GPUs (NVIDIA driver {gpus.driver}{cuda}):"]
        for gpu in gpus.gpus:
            lines += _gpu_line(gpu)
    else:
        lines = [f"GPUs: none. {gpus.reason}"]
    for build in builds:
        lines += ["", f"Python {build.python}:"]
        if not build.ok:
            lines.append(f"  {build.message}")
            continue
        lines.append(_build_line(build))
        if not gpus.available:
            lines.append("  No GPU to run on: TensorFlow will use the CPU.")
        jit = False
        for gpu, prediction, note in predictions(gpus, build):
            lines.append(f"  GPU {gpu.index}: {prediction.message}")
            if prediction.verdict is Verdict.JIT:
                lines.append(f"         {cost_sentence(build, gpus, gpu)}")
            if note:
                lines.append(f"         {note}")
            jit = jit or prediction.verdict is Verdict.JIT
        if jit:
            lines.append(f"  {cache_note(env)}")
    return "\n".join(lines)


def _cost_json(build: BuildInfo, gpus: GpuInventory, gpu: Gpu) -> dict[str, Any]:
    """A JIT card's measured cold-cache cost (None when not measured), and the sentence."""
    cost = CostStore().get(cost_key(build, gpus, gpu))
    return {"cuda_cache_cost": None if cost is None else cost.to_dict(),
            "cuda_cache_cost_note": cost_sentence(build, gpus, gpu)}


def devices_json(gpus: GpuInventory, builds: list[BuildInfo], env: dict[str, str]) -> dict[str, Any]:
    interpreters = []
    for build in builds:
        entry = build.to_dict()
        entry["gpus"] = [{"index": gpu.index, "verdict": p.verdict.value, "target": p.target, "message": p.message,
                          "driver_note": note, **(_cost_json(build, gpus, gpu) if p.verdict is Verdict.JIT else {})}
                         for gpu, p, note in (predictions(gpus, build) if build.ok else [])]
        if any(g["verdict"] == Verdict.JIT.value for g in entry["gpus"]):
            entry["cuda_cache"] = cache_note(env)
        interpreters.append(entry)
    return {
        "gpus": [{"index": g.index, "name": g.name, "uuid": g.uuid,
                  "compute_capability": None if g.compute_capability is None else
                  f"{g.compute_capability[0]}.{g.compute_capability[1]}",
                  "memory_total": g.memory_total, "memory_used": g.memory_used,
                  "persistence_mode": g.persistence_mode} for g in gpus.gpus],
        "driver": gpus.driver, "cuda_driver": gpus.cuda_driver, "no_gpu_reason": gpus.reason,
        "interpreters": interpreters,
    }
