"""Every stack a researcher runs, seen as it runs (issue 40): on each stack of stacks.py (Python
3.8-3.13, TensorFlow 2.13-2.21, Keras 2 bundled, tf-keras, Keras 3) the programs of
programs/ (tf.keras only) run

- plainly and under `tflaunch bench --until exit`, which must match (exit status, stdout, the
  traceback, the files written: observed_harness);
- under `--until first_step` (or first_inference), whose ready point must agree with the
  program's own clock within 1 % of its time to first step or 20 ms;
- warm (`bench --warm`: started warm, first step seen), with its anatomy (`bench --anatomy`),
  and through the doctor's verified warm arm.

`make test-stacks` builds the stacks and runs this tier; a stack that is not built is skipped
with its reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tflaunch.core.run.record import PhaseState, RunStatus

from ..observed_harness import Case, both, copy_of_cases, differences, observed_record, user_environment
from ..own_clock import truth
from .stacks import STACKS, Stack, why_absent

pytestmark = pytest.mark.stacks
PROGRAMS = Path(__file__).with_name("programs")
TRAINING = ("fit_tfdata", "custom_train_step", "tape_loop", "mixed_precision_loop", "checkpoint_restore",
            "mirrored_loop")
SERVING = ("h5_serving", "evaluate_only")
# The must-hold agreement with the program's own clock: 1 % of its time to the point, or 20 ms.
AGREEMENT = (0.01, 0.020)


def ready(stack: Stack) -> Stack:
    reason = why_absent(stack)
    if reason:
        pytest.skip(reason)
    return stack


def environment(stack: Stack) -> dict[str, str]:
    return {**user_environment(), **stack.env}


def stacks() -> list[object]:
    return [pytest.param(s, id=s.name) for s in STACKS]


@pytest.mark.parametrize("stack", stacks())
@pytest.mark.parametrize("program", TRAINING + SERVING)
def test_observed_equals_unobserved(stack: Stack, program: str, tmp_path: Path) -> None:
    stack = ready(stack)
    plain_seen, observed_seen = both(Case(program, (f"{program}.py",)), tmp_path, environment(stack),
                                     str(stack.interpreter), PROGRAMS)
    assert plain_seen.status == 0, plain_seen
    assert plain_seen == observed_seen, differences(plain_seen, observed_seen)


@pytest.mark.parametrize("stack", stacks())
@pytest.mark.parametrize("program", TRAINING + SERVING)
def test_the_ready_point_is_the_programs_own(stack: Stack, program: str, tmp_path: Path) -> None:
    stack = ready(stack)
    until, key = ("first_step", "first_step_end") if program in TRAINING else ("first_inference",
                                                                                 "first_inference_end")
    folder = copy_of_cases(tmp_path / "run", PROGRAMS)
    record, _ = observed_record(Case(program, (f"{program}.py",)), folder, environment(stack), until,
                                str(stack.interpreter))
    assert record.status is RunStatus.OK, record.headline
    reached = [n for n, p in record.phases.items() if p.state is PhaseState.DONE]
    assert {"import", "first_step" if until == "first_step" else "first", "steady"} <= set(reached), reached
    own = truth(record, key)
    assert record.ready_at is not None
    share, floor = AGREEMENT
    allowed = max(share * (own - record.launched_at), floor)
    cost = record.watching  # what watching cost it by its own clock (the hooks' path differs from 3.12 on)
    assert cost is not None and cost.calls > 0 and 0 < cost.setup < own - record.launched_at, cost
    print(f"CLOCK {stack.name} {program} {until}: tflaunch - program = {1000 * (record.ready_at - own):+.1f} ms "
          f"of {own - record.launched_at:.2f} s (allowed {1000 * allowed:.0f} ms); watching took "
          f"{1000 * cost.total:.1f} ms ({cost.calls} calls)")
    assert abs(record.ready_at - own) <= allowed


def bench(stack: Stack, folder: Path, *flags: str) -> dict[str, object]:
    """`tflaunch bench --json` from outside, as a user runs it, on the stack's interpreter."""
    done = subprocess.run([sys.executable, "-m", "tflaunch.core.cli.main", "bench", "--json", "--no-history",
                           "--python", str(stack.interpreter), "--cwd", str(folder), *flags, "--",
                           "python", "fit_tfdata.py"],
                          env={**os.environ, **stack.env}, capture_output=True, text=True, timeout=600)
    assert done.stdout, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert isinstance(result, dict)
    return result


@pytest.mark.parametrize("stack", stacks())
def test_a_warm_start_sees_the_first_step(stack: Stack, tmp_path: Path) -> None:
    stack = ready(stack)
    result = bench(stack, copy_of_cases(tmp_path / "run", PROGRAMS), "--warm")
    run = result["runs"][0]  # type: ignore[index]
    assert run["status"] == "ok", run.get("failure")
    assert run["warm_start"]["started"] == "warm", run["warm_start"]
    assert "first_step" in [p["name"] if isinstance(p, dict) else p for p in run["phases"]]


@pytest.mark.parametrize("stack", stacks())
def test_the_anatomy_opens_the_first_step(stack: Stack, tmp_path: Path) -> None:
    stack = ready(stack)
    result = bench(stack, copy_of_cases(tmp_path / "run", PROGRAMS), "--anatomy")
    anatomy = result.get("anatomy")  # the extra, profiled run's, beside the measured runs
    assert isinstance(anatomy, dict) and anatomy.get("parts"), (anatomy, result.get("anatomy_problem"))
    attributed = sum(part["seconds"] for part in anatomy["parts"]) / anatomy["window"]
    print(f"ANATOMY {stack.name}: {anatomy['window']:.2f} s, {100 * attributed:.0f} % attributed")
    assert attributed > 0.8


@pytest.mark.parametrize("stack", stacks())
def test_the_doctor_verifies_its_warm_arm(stack: Stack, tmp_path: Path) -> None:
    stack = ready(stack)
    folder = copy_of_cases(tmp_path / "run", PROGRAMS)
    done = subprocess.run([sys.executable, "-m", "tflaunch.core.cli.main", "doctor", "--json", "--no-history",
                           "--only", "warm", "--repeat", "3", "--python", str(stack.interpreter), "--cwd", str(folder),
                           "--", "python", "fit_tfdata.py"],
                          env={**os.environ, **stack.env}, capture_output=True, text=True, timeout=900)
    assert done.stdout, done.stderr[-3000:]
    report = json.loads(done.stdout)
    text = json.dumps(report)
    assert "never imported TensorFlow" not in text and "does not run with these settings" not in text, text[:2000]
    print(f"DOCTOR {stack.name}: {text[:600]}")


@pytest.mark.parametrize("stack", stacks())
def test_the_hooks_are_not_seen_on_python_3_12(stack: Stack, tmp_path: Path) -> None:
    """A Keras warning names the same file:line, a traceback through a hooked method has the
    same frames and inspect reads hooked methods alike, observed and plain: on Python 3.12+,
    where sys.monitoring watches the methods with no wrapper. Before 3.12 the wrappers show
    (the traceback's frame more, the warning's line): said in the README, not hidden."""
    stack = ready(stack)
    if tuple(int(x) for x in stack.python.split(".")) < (3, 12):
        pytest.skip(f"Python {stack.python} has no sys.monitoring: the hooks are wrappers there (README)")
    plain_seen, observed_seen = both(Case("hooks_unseen", ("hooks_unseen.py",)), tmp_path, environment(stack),
                                     str(stack.interpreter), PROGRAMS)
    assert plain_seen.status == 0, plain_seen
    assert "frames" in str(plain_seen), plain_seen
    assert plain_seen == observed_seen, differences(plain_seen, observed_seen)
