"""Builders the tests share: real sample models on disk, records with known figures,
and the `tflaunch` command run as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from tflaunch.core.probe.model.convert import FORMATS
from tflaunch.core.run import events as ev
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.formats import convert
from tflaunch.core.run.model_facts import ModelFacts
from tflaunch.core.run.read_back import ReadBack
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig

TFLAUNCH = [sys.executable, "-m", "tflaunch.gui.main"]


def tflaunch(*args: str, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """The command line in a fresh process, as a user would type it."""
    return subprocess.run([*TFLAUNCH, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def save_sample(name: str, out: Path, formats: Iterable[str] = FORMATS) -> dict[str, Path]:
    """Build a sample from code in a child process (the probe's conversion mode) and save
    it in each format; {format: path}."""
    return convert(sys.executable, f"sample:{name}", list(formats), out)


def record_through(phase_names: Iterable[str], launched: float = 100.0) -> RunRecord:
    """A record fed the events of a run that got through `phase_names`, 1 s each."""
    record = RunRecord(LaunchConfig(), launched_at=launched)
    t = launched + 0.05
    record.apply(ev.Hello(t, "spawn", 42, 0.05, "python"))
    record.apply(ev.PhaseEnd(t, "spawn", 0.05, 1, 1))
    for name in phase_names:
        record.apply(ev.PhaseStart(t, name))
        t += 1.0
        record.apply(ev.PhaseEnd(t, name, 1.0, 10, 20))
    return record


def finished_record(model: str = "sample:mlp", ready_s: float = 1.0, intra: int = 0, at: float = 1000.0) -> RunRecord:
    """A successful run with round figures: time to ready 20 ms + ready_s."""
    record = RunRecord(LaunchConfig(model=model, intra=intra), launched_at=at)
    record.apply(ev.Hello(at + 0.02, "spawn", 7, 0.02, "python"))
    record.apply(ev.PhaseEnd(at + 0.02, "spawn", 0.02, 10, 10))
    t = at + 0.02
    for name in ("import", "devices", "load", "trace", "first", "steady"):
        record.apply(ev.PhaseStart(t, name))
        t += ready_s / 5
        record.apply(ev.PhaseEnd(t, name, ready_s / 5, 100, 200, {"n": 3, "median": 0.001} if name == "steady" else {}))
    record.apply(ev.SettingsApplied(t, "devices", ReadBack({"intra_op_threads": intra})))
    record.apply(ev.Result(t, "steady", EnvironmentFacts({"tensorflow": "2.21.0"}),
                           ModelFacts({"name": "mlp", "params": 5})))
    record.add_stderr("I0000 a log line")
    record.add_sample(at + 0.5, 300)
    record.add_sample(at + 1.0, 400)
    record.finish(0)
    return record


def slow_python(folder: Path) -> str:
    """An interpreter that first sleeps $DELAY seconds: a setting with a known, large effect,
    for sweeps that must find a clear winner whatever the machine's noise."""
    wrapper = folder / "slow-python"
    wrapper.write_text(f'#!/bin/sh\nsleep "${{DELAY:-0}}"\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def fake_python(folder: Path) -> str:
    """An interpreter that speaks the probe's protocol without TensorFlow, or misbehaves as
    the run's TFLAUNCH_FAKE_CHILD variable says (tests/fake_child.py): faults in seconds."""
    source = Path(__file__).with_name("fake_child.py").read_text(encoding="utf-8")
    path = folder / "fake-python"
    path.write_text(f"#!{sys.executable}\n{source}", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def store_old_script_run(history, argv: list[str], at: float, ran_s: float, mark: str | None = None,
                         exit_code: int = 0) -> int:
    """A row as tflaunch stored a run of the old `script` subject (the app's Launch script
    before the one engine): its command line, no phases, no ready point, its run time by
    finished_at. Written through SQL, as the old code left it; its id."""
    import json

    record = RunRecord(LaunchConfig(), launched_at=at)
    if mark is not None:
        record.marks.append((mark, 0.01))
    record.finish(exit_code)
    run_id = history.record(record, "gui")
    name = next((part for part in argv[1:] if not part.startswith("-")), argv[0])
    status = "ok" if exit_code == 0 else "failed"
    failure = None if exit_code == 0 else json.dumps({"kind": "script_failed", "message": f"The script exited with "
                                                      f"code {exit_code}.", "detail": ""})
    with history._db:
        history._db.execute("UPDATE runs SET command=?, time_to_ready=NULL, model=?, finished_at=?, status=?, "
                            "failed_phase=NULL, failure=? WHERE id=?",
                            (json.dumps(argv), f"script: {name}", at + ran_s, status, failure, run_id))
        history._db.execute("DELETE FROM phases WHERE run_id=?", (run_id,))
    return run_id
