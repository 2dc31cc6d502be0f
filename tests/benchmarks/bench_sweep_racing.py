"""Racing versus running every trial, on a real sweep with one clearly best setting.

sample:mlp, objective first inference, batch 1 against batch 512 to 4096 (six settings):
batch 1 is clearly best. Target: racing crowns the same winner as the full sweep in at
most 50% of its trials.
"""

from __future__ import annotations

import sys
import time

from tests.benchmarks.common import report
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.sweep.plan import SweepPlan, verdict
from tflaunch.core.sweep.session import SweepSession, prepare, run_headless

AXES = {"batch": ["1", "512", "1024", "2048", "3072", "4096"]}


def run(racing: bool) -> dict:
    plan = SweepPlan(LaunchConfig(model="sample:mlp", steady=0), AXES, repeat=8, warmup=1,
                     objective="first", racing=racing)
    started = time.monotonic()
    session = SweepSession(plan, prepare(plan), history=None)
    status = run_headless(session)
    sweep = session.sweep
    leader = sweep.leader()
    print(f"racing={racing}: {sweep.trials_run} trials, winner {leader.candidate.key}", file=sys.stderr)
    return {"status": status, "trials": sweep.trials_run, "winner": leader.candidate.key,
            "verdict": verdict(leader, plan.objective), "seconds": time.monotonic() - started,
            "stopped": sorted(sweep.stopped)}


def main() -> None:
    full, raced = run(racing=False), run(racing=True)
    share = raced["trials"] / full["trials"]
    report("sweep_racing", {
        "benchmark": "racing vs every trial: sample:mlp first inference over 6 batch sizes",
        "full": full, "racing": raced, "trial_share": share,
        "same_winner": full["winner"] == raced["winner"],
        "target": "same winner in at most 50% of the trials",
        "met": full["winner"] == raced["winner"] and share <= 0.5,
    })


if __name__ == "__main__":
    main()
