"""What a cold CUDA kernel cache costs on this machine's first GPU, where TensorFlow's kernels
are JIT-compiled from PTX: pairs of runs of sample:mlp with the cache empty (cold) and kept
(warm), alternated, through the same measurement `tflaunch devices --measure-cuda-cache` makes
(and remembers). The GPU tier asserts that the pair is measured and remembered; the figures
are here, never in a test (cold was 14.16 s vs warm 14.21 s on an H200: lazy loading
compiles little). TFLAUNCH_GPU_PYTHON names the interpreter with TensorFlow built with CUDA.
Reported: cold/warm median ratios of time to ready and of the first call. No target: the
figure is what the card and driver give.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile

from tests.benchmarks.common import report

PAIRS = 3


def main() -> None:
    os.environ["TFLAUNCH_DATA_DIR"] = tempfile.mkdtemp(prefix="tflaunch-cuda-cache-")
    from tflaunch.core.doctor.cuda_cache import jit_cards, measure
    from tflaunch.core.run.gpus.nvml import inventory
    from tflaunch.core.run.interpreters.build_info import build_info

    python = os.environ.get("TFLAUNCH_GPU_PYTHON", sys.executable)
    gpus, build = inventory(), build_info(python)
    cards = jit_cards(build, gpus) if gpus.available and build.ok else []
    if not cards:
        why = gpus.reason if not gpus.available else build.message if not build.ok else (
            "no GPU here JIT-compiles this TensorFlow's kernels")
        report("cuda_cache", {"benchmark": "cold / warm CUDA cache", "skipped": why})
        return
    cost = measure(build, gpus, cards[0], PAIRS, say=lambda text: print(text, file=sys.stderr))
    report("cuda_cache", {
        "benchmark": f"time to ready of sample:mlp on GPU {cost.gpu_index} ({cost.key.card}), CUDA cache cold / warm",
        "cost": cost.to_dict(),
        "median_ratio_time_to_ready": statistics.median(cost.cold_s) / statistics.median(cost.warm_s),
        "median_ratio_first_call": (statistics.median(cost.cold_first_s) / statistics.median(cost.warm_first_s)
                                    if cost.cold_first_s and cost.warm_first_s else None),
    })


if __name__ == "__main__":
    main()
