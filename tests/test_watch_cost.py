"""What watching cost a program, as its own process counted it (probe/observer/cost.py): sent
once at the ready point, checked where it enters, kept by the history, said in the notes;
and the launch hook's start loads nothing a program importing TensorFlow would not load."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tflaunch.core.probe.observer.cost import Cost
from tflaunch.core.probe.observer.observe import Observer
from tflaunch.core.probe.observer.observe_install import tell_cost
from tflaunch.core.run import events as ev
from tflaunch.core.run.watch_cost import WatchCost
from tflaunch.core.run.words import notes
from tflaunch.core.store.history import History

from .builders import finished_record
from .test_observer_rules import observer, step

HOOK = Path(ev.__file__).resolve().parents[1] / "settings" / "launch_hook"
# Read from the file: importing the launch hook would install it in this process.
STDLIB_AHEAD = next(ast.literal_eval(node.value) for node in ast.parse((HOOK / "sitecustomize.py").read_text()).body
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "STDLIB_AHEAD")


def cost_of(obs: Observer, setup: float = 0.012, hooks: float = 0.002, calls: int = 41) -> Cost:
    cost = Cost()
    cost.setup, cost.hooks, cost.calls = setup, hooks, calls
    obs.ready = lambda: tell_cost(obs, cost)  # as the launch hook's install wires it, with these figures
    return cost


def watching(lines: list[dict]) -> list[dict]:
    return [line for line in lines if line["event"] == "watching"]


def test_the_cost_is_told_once_at_the_ready_point_with_the_figures_until_then() -> None:
    obs, clock, lines = observer(until="first_step", steady=2)
    cost = cost_of(obs)
    step(obs, clock, key=1, start=0.0, end=1.0, traced=True)
    cost.calls = 99  # steady state's calls come after the ready point: not in the figure
    for t in (1.5, 2.0, 2.5):
        step(obs, clock, key=1, start=t - 0.1, end=t)
    told = watching(lines)
    assert [(t["setup"], t["hooks"], t["calls"]) for t in told] == [(0.012, 0.002, 41)]
    assert lines.index(told[0]) > next(i for i, line in enumerate(lines) if line["phase"] == "first_step"
                                       and line["event"] == "phase_end")


def test_to_the_exit_the_cost_is_the_whole_runs_and_a_mark_is_a_ready_point_too() -> None:
    obs, clock, lines = observer(until="exit", steady=0)
    cost = cost_of(obs)
    step(obs, clock, key=1, start=0.0, end=1.0, traced=True)
    assert watching(lines) == []
    cost.calls = 120
    obs.at_exit()
    assert [t["calls"] for t in watching(lines)] == [120]

    obs, clock, lines = observer(until="mark:ready", steady=0)
    cost_of(obs)
    obs.marked("ready")
    obs.marked("ready")  # the same mark again is no second ready point
    assert len(watching(lines)) == 1


def test_an_observer_not_put_in_by_the_launch_hook_tells_no_cost() -> None:
    obs, clock, lines = observer()
    step(obs, clock, key=1, start=0.0, end=1.0, traced=True)
    assert watching(lines) == []


@pytest.mark.parametrize("fields", [
    {"setup": -0.1, "hooks": 0.0, "calls": 1}, {"setup": 0.1, "hooks": float("inf"), "calls": 1},
    {"setup": 0.1, "hooks": 0.0, "calls": True}, {"setup": 0.1, "hooks": 0.0, "calls": -3},
    {"setup": "0.1", "hooks": 0.0, "calls": 1}, {"hooks": 0.0, "calls": 1}])
def test_a_cost_out_of_range_or_of_another_type_is_malformed(fields: dict) -> None:
    parser = ev.EventParser()
    assert parser.parse(json.dumps({"v": 1, "ts": 5.0, "phase": "first_step", "event": "watching", **fields})) is None
    assert parser.malformed == 1


def test_a_run_keeps_its_cost_in_the_history_and_says_it_in_its_notes(tmp_path) -> None:
    record = finished_record()
    record.apply(ev.EventParser().parse(ev.encode("watching", "first", 1001.0, setup=0.0121, hooks=0.0019,
                                                  calls=41)))
    assert record.watching == WatchCost(0.0121, 0.0019, 41)
    said = [n for n in notes(record) if n.startswith("Watching took")]
    assert said == ["Watching took 14.0 ms of the program's own time to its first training step (1.4%): the launch "
                    "hook 12.1 ms, 41 watched calls 1.9 ms (a floor: what no clock in the program sees is not in it)."]
    history = History(tmp_path / "h.sqlite3")
    loaded = History(tmp_path / "h.sqlite3").load(history.record(record, "cli"))
    assert loaded.watching == record.watching
    assert WatchCost.of({"setup": 0.1, "hooks": -1, "calls": 2}) is None  # a junk stored figure: none at all
    assert WatchCost.of("0.1") is None


def _loaded_by(code: str, hooked: bool) -> set[str]:
    """The modules a fresh interpreter has loaded after `code`, with the launch hook observing or without."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TFLAUNCH_")}
    read, write = os.pipe()
    if hooked:
        env.update(PYTHONPATH=str(HOOK), TFLAUNCH_EVENTS_FD=str(write), TFLAUNCH_OBSERVE="{}")
    try:
        listing = f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
        out = subprocess.run([sys.executable, "-c", listing], env=env, capture_output=True, text=True,
                             timeout=120, pass_fds=(write,), check=True)
    finally:
        os.close(write)
        os.close(read)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_the_hooks_start_loads_only_its_own_code_and_what_tensorflow_loads_anyway() -> None:
    """What the launch hook's start costs is its own code alone (sitecustomize times the
    standard library it loads ahead apart): every other module it loads is in STDLIB_AHEAD's
    closure, and `import tensorflow` loads each of those too, so a program pays for them either way."""
    ahead = _loaded_by("import " + ", ".join(STDLIB_AHEAD), hooked=False)
    hooked = _loaded_by("pass", hooked=True)
    ours = {name for name in hooked - ahead
            if name.split(".")[0] in ("tflaunch_probe", "tflaunch_probe_entry", "sitecustomize")}
    assert hooked - ahead - ours == set(), "a module the hook's start loads that is neither ours nor ahead"
    assert any(name.startswith("tflaunch_probe.observer") for name in ours)
    assert "tflaunch_probe.anatomy" not in ours, "the anatomy is loaded for an anatomy run alone"
    with_tensorflow = _loaded_by("import tensorflow", hooked=False)
    plain = _loaded_by("pass", hooked=False)
    assert (ahead - plain) - with_tensorflow == set(), "loaded ahead, but TensorFlow does not load it"
