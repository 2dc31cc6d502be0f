"""The doctor's warm-start arm: the command it will advise, measured as the user will run it.

The advice is `tflaunch run --warm --profile NAME -- /abs/python SCRIPT ARGS`: a profile the
doctor saved (the settings it measured) and the interpreter it measured, by absolute path
(with another `python` first on PATH, `python` would be another interpreter, which cannot
start warm). The warm side runs exactly that command, so its time counts from the user's
command to the ready point, the CLI's own start before the fork included; the cold side is
the user's own command (`python SCRIPT`). Both are measured runs like every other arm (one
engine: ProbeSession, the program observed to its ready point) and stored in History.

A model subject is measured the same way, through a script that loads the model and calls
it once: its ready point is that first inference.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import cache_dir, profiles_dir
from ..run.driver import run_sessions
from ..run.environment import launch_environment
from ..run.formats import in_formats
from ..run.program import BARE_PYTHONS, program_argv
from ..run.record import RunRecord, RunStatus
from ..run.session import ProbeSession
from ..run.trial_info import TrialInfo
from ..run.watcher import Watcher, Watchers
from ..run.words import start_kind, warm_notes
from ..settings.config import LaunchConfig
from ..store.atomic import atomic_write
from ..store.profiles import Profile, ProfileError, ProfileStore, evidence_from_runs
from ..store.recorder import RunRecorder
from ..subject import Subject
from .verdict import Saving, saving

Say = Callable[[str], None]
WARM_SCRIPT = """
import sys
import tensorflow as tf
import keras
model = keras.models.load_model(sys.argv[1], compile=False)
inputs = [tf.random.uniform((1,) + tuple(d or 1 for d in i.shape[1:])) for i in model.inputs]
model(inputs[0] if len(inputs) == 1 else inputs, training=False)
"""
COLD, WARM = "cold start", "warm start"


@dataclass
class WarmArm:
    """What the warm arm measured, or why it was not measured."""

    saving: Saving | None = None
    note: str | None = None  # why warm start was not measured
    command: list[str] = field(default_factory=list)  # the command advised, as it was measured
    profile: str | None = None  # the profile it names, saved by the doctor
    workdir: str = ""  # where to run it (a program's working folder)

    @property
    def advice(self) -> str:
        """The command line to type, with where to type it."""
        where = f" (in {self.workdir})" if self.workdir else ""
        return shlex.join(self.command) + where


def profile_name(program: tuple[str, ...]) -> str:
    """doctor-warm-train for `python train.py` (doctor-warm-pkg.main for `python -m pkg.main`):
    the characters profile names take."""
    words = list(program[1:])
    script = next((w for w in words if w.endswith(".py")), None)
    stem = Path(script).stem if script else words[words.index("-m") + 1] if "-m" in words[:-1] else "program"
    return "doctor-warm-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "program")[:40]


def interpreter(config: LaunchConfig) -> str:
    """The program's interpreter as the measured run started it (a bare `python` is the chosen
    interpreter; another name is found on the launch's PATH, a path from its working folder),
    by absolute path; a model subject's is the configured one."""
    if not config.is_program or config.program[0] in BARE_PYTHONS:  # the setting, from our folder
        return os.path.abspath(config.python)
    first = program_argv(config)[0]
    if os.sep in first:
        return os.path.abspath(os.path.join(os.path.expanduser(config.workdir or os.getcwd()), first))
    found = shutil.which(first, path=launch_environment(config, launch_hook=True).get("PATH"))
    return os.path.abspath(found) if found else first


def tflaunch_command() -> list[str]:
    """How a user starts tflaunch here: `tflaunch` when that is this installation's command on
    PATH, else its absolute path, else the module."""
    script = Path(sys.executable).parent / "tflaunch"
    if script.is_file() and os.access(script, os.X_OK):
        on_path = shutil.which("tflaunch")
        return ["tflaunch"] if on_path and os.path.samefile(on_path, script) else [str(script)]
    return [sys.executable, "-m", "tflaunch.gui.main"]


def subject_program(base: LaunchConfig, say: Say) -> tuple[LaunchConfig | None, str | None]:
    """The program the warm arm measures: the user's own, or for a saved model a script that
    loads it and calls it once (until its first inference); None and why when there is none."""
    if base.is_program:
        return base, None
    if base.model.startswith("sample:"):
        model = in_formats(base.model, ["keras"], base.python)["keras"]
    elif os.path.exists(base.model) and not base.model.endswith(".py") and ":" not in Path(base.model).name:
        model = base.model
    else:
        return None, "warm start is measured with a saved model; a model your code builds is not one"
    script = cache_dir() / "doctor" / "load_and_call.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(WARM_SCRIPT)
    say(f"warm start is measured with a script that loads {base.model} and calls it once ({script})")
    return base.replace(program=(os.path.abspath(base.python), str(script), str(model)), until="first_inference",
                        steady=0, workdir=""), None


def measure(base: LaunchConfig, repeat: int, say: Say, recorder: RunRecorder | None = None,
            watcher: Watcher | None = None, store: ProfileStore | None = None) -> WarmArm:
    """The user's command cold against the advised command warm, alternated, each to the
    ready point; the profile it names saved with the runs as its evidence."""
    program, why = subject_program(base, say)
    if program is None:
        return WarmArm(note=why)
    store = store or ProfileStore(profiles_dir())
    name = profile_name(program.program)
    python = interpreter(program)
    arm = WarmArm(command=[*tflaunch_command(), "run", "--warm", "--profile", name, "--", python,
                           *program.program[1:]], profile=name, workdir=program.workdir)
    # A profile of that name (the doctor's advice of an earlier day, maybe accepted and in use)
    # is kept as a dated copy by the save, and put back as it was when nothing is advised.
    accepted = store.trust.accepted(store.path(name))
    try:  # the settings measured, so the command advised applies exactly them
        store.save(Profile(name, program.replace(program=(), workdir=""), {"runs": 0}, subject=Subject.PROGRAM),
                   overwrite=True)
        replaced = store.kept_copy
    except (ProfileError, OSError) as exc:
        arm.note = f"warm start could not be measured: the profile {name} could not be saved ({exc})"
        return arm
    number = [0]

    def ready(warm: bool, warmup: bool = False) -> RunRecord:
        session = ProbeSession(program, warm=warm, launcher=[*arm.command] if warm else None)
        if recorder is not None:
            recorder.label(session.record, None, TrialInfo(WARM if warm else COLD, warmup, number[0]))
        number[0] += 1
        watchers = recorder if watcher is None else Watchers(*(w for w in (recorder, watcher) if w is not None))
        record = run_sessions([session], watchers)[0]
        if record.status is not RunStatus.OK or record.time_to_ready is None:
            raise RuntimeError(f"{WARM if warm else COLD}: {record.headline}")
        if warm and start_kind(record) != "warm":
            why = " ".join(warm_notes(record)) or "the log of the warm launch says why"
            raise RuntimeError(f"the program could not start warm with {shlex.join(arm.command)}: {why}")
        return record

    say(f"measuring warm start: {repeat} launches of your command cold and {repeat} of "
        f"`{shlex.join(arm.command)}`, alternated, each to the ready point")
    try:
        ready(True, warmup=True)  # starts the warm server: not counted, as a later warm launch does not pay it
        cold: list[RunRecord] = []
        warm: list[RunRecord] = []
        for i in range(repeat):
            order = [(cold, False), (warm, True)]
            for records, is_warm in order if i % 2 == 0 else reversed(order):
                records.append(ready(is_warm))
    except RuntimeError as exc:
        arm.note = f"warm start could not be measured: {exc}"
        _remove(store, name, replaced, accepted)
        return arm
    arm.saving = saving([r.time_to_ready or 0.0 for r in warm], [r.time_to_ready or 0.0 for r in cold])
    if arm.saving is None or not arm.saving.significant:
        _remove(store, name, replaced, accepted)  # advised nowhere: not left behind
        arm.profile = None
        return arm
    store.save(Profile(name, program.replace(program=(), workdir=""), evidence_from_runs(warm, cold),
                       subject=Subject.PROGRAM), overwrite=True)
    if store.kept_copy is not None:  # the doctor's own file of a minute ago, not the user's
        store.kept_copy.unlink(missing_ok=True)
    return arm


def _remove(store: ProfileStore, name: str, replaced: Path | None, accepted: str | None) -> None:
    """Take the doctor's profile away; one it replaced is put back, with its acceptance."""
    try:
        if replaced is None:
            store.delete(name)
            return
        path = store.path(name)
        atomic_write(path, replaced.read_bytes())
        if accepted is not None:
            store.trust.accept(path, accepted)
        else:
            store.trust.forget(path)
        replaced.unlink()
    except (ProfileError, OSError):
        pass
