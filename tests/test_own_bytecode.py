"""tflaunch's own code in a measured child (the launch hook's observer, the probe) gets its
bytecode written even when the child runs under PYTHONDONTWRITEBYTECODE, so only the first
launch compiles it; the program's own imports keep the setting it was started with."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.child import PROBE_DIR
from tflaunch.core.settings.config import LaunchConfig

OBSERVER = [PROBE_DIR / "observer" / name for name in ("observe.py", "observe_install.py", "keras_hooks.py")]
PROBE = [PROBE_DIR / "main.py", PROBE_DIR / "model" / "runner.py"]

PROGRAM = """
import sys
import helper
with open("seen.txt", "w") as f:
    f.write(str(sys.dont_write_bytecode))
"""


def bytecode(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def removed(sources: list[Path]) -> None:
    for source in sources:
        bytecode(source).unlink(missing_ok=True)


@pytest.fixture
def no_bytecode_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")


def test_a_programs_observer_is_compiled_once_and_the_program_keeps_its_setting(tmp_path: Path,
                                                                         no_bytecode_written: None) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    removed(OBSERVER)
    config = LaunchConfig(program=("python", "prog.py"), until="exit", workdir=str(tmp_path), timeout=60)
    record = run_sessions([ProbeSession(config)])[0]
    assert record.status is RunStatus.OK, record.headline
    assert all(bytecode(source).is_file() for source in OBSERVER), "written under PYTHONDONTWRITEBYTECODE"
    assert not (tmp_path / "__pycache__").exists(), "the program's own import wrote no bytecode"
    assert (tmp_path / "seen.txt").read_text() == "True", "the program sees the setting it was started with"


def test_the_probe_is_compiled_once(quick_config: LaunchConfig, no_bytecode_written: None) -> None:
    removed(PROBE)
    record = run_sessions([ProbeSession(quick_config.replace(steady=1))])[0]
    assert record.status is RunStatus.OK, record.headline
    assert all(bytecode(source).is_file() for source in PROBE)
