"""What was checked is what runs (issue 43, item 1): a profile's interpreter, SavedModel and
builder are compared with its yes once, and every launch after runs from what was compared
(the interpreter pinned by its resolved place, the code from private copies), never from
the path text a second time. Each race test flips a link or swaps a folder in a loop while
profiles are loaded and launched; before the fix the stranger's interpreter or graph ran.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tflaunch.core.paths import profiles_dir
from tflaunch.core.run.driver import run_sessions
from tflaunch.core.run.record import RunStatus
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.profiles import Profile, ProfileStore, UntrustedProfileError

LOADS = 40  # profile loads per race test (each sees the link or folder as it is then: both, in 40)
LAUNCHES_PER_LOAD = 3  # the interpreter race: launches of one load, as `bench --repeat 3` makes


def _flip(link: Path, target: Path) -> None:
    """Point `link` at `target` at once (a new link renamed over it)."""
    spare = link.with_name(link.name + ".next")
    spare.unlink(missing_ok=True)
    spare.symlink_to(target)
    os.replace(spare, link)


FLIPPER = """
import os, signal, sys, time
link, targets, flips = sys.argv[1], sys.argv[2:], 0
def stop(*_):
    print(flips, flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
print("flipping", flush=True)
while True:
    spare = link + ".next"
    try:
        os.unlink(spare)
    except FileNotFoundError:
        pass
    os.symlink(targets[flips % len(targets)], spare)
    os.replace(spare, link)
    flips += 1
    time.sleep(0.002)  # a sleeper is run again at once when it wakes; a busy loop waits for a free core
"""


@contextmanager
def flipping(link: Path, targets: list[Path]) -> Iterator[list[int]]:
    """Another process (as an attacker's would be) flipping `link` among `targets` every 2 ms
    until the block ends; yields [flips made], filled in at the end."""
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(link), *map(str, targets)],
                               stdout=subprocess.PIPE, text=True)
    flips = [0]
    try:
        assert flipper.stdout is not None and flipper.stdout.readline() == "flipping\n"
        yield flips
    finally:
        flipper.terminate()
        out, _ = flipper.communicate(timeout=30)
        flips[0] = int(out.split()[-1]) if out.split() else 0


def _stranger_python(folder: Path, marker: Path) -> Path:
    """Another user's interpreter: it leaves a marker, then behaves as python would."""
    folder.mkdir(parents=True)
    python = folder / "python"
    python.write_text(f"#!/bin/sh\necho ran >> {marker}\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    return python


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_linked_interpreter_flipped_in_a_loop_never_runs_the_stranger_s(tmp_path):
    """`python = LINK/python` with LINK to tflaunch's own bin/ needs no yes; flipped to a
    stranger's bin/ after the check, the stranger's python ran (5 of 8 launches)."""
    marker = tmp_path / "stranger-ran"
    theirs = _stranger_python(tmp_path / "theirs" / "bin", marker).parent
    ours = Path(sys.executable).parent
    link = tmp_path / "env"
    link.symlink_to(ours)
    store = ProfileStore(profiles_dir())
    shared = tmp_path / "shared.toml"
    shared.write_text(f'schema_version = 1\n[settings]\npython = "{link}/python"\n')
    store.import_file(shared)
    program = ("python", "-c", "import sys; print(sys.executable)")
    launched = refused = failed = 0
    pythons: set[str] = set()
    with flipping(link, [theirs, ours]) as flips:
        for _ in range(LOADS):
            try:
                config = store.load_for_launch("shared").config
            except UntrustedProfileError as exc:  # the check saw the stranger's: asked, never run
                assert "runs the interpreter" in str(exc)
                refused += 1
                continue
            pythons.add(config.python)
            for _ in range(LAUNCHES_PER_LOAD):
                record = run_sessions([ProbeSession(config.replace(program=program, until="exit", timeout=60))])[0]
                failed += record.status is not RunStatus.OK
                launched += 1
    ran = len(marker.read_text().split()) if marker.exists() else 0
    print(f"{LOADS} loads ({refused} refused), {launched} launches ({failed} failed), {flips[0]} flips; the "
          f"stranger's interpreter ran {ran} times")
    assert refused and launched, "the race was run: the check saw both"
    assert ran == 0, f"the stranger's interpreter ran {ran} of {launched} launches"
    assert failed == 0, f"{failed} of {launched} launches failed"
    assert pythons == {sys.executable}, "tflaunch's own interpreter, by its own path"


def test_an_accepted_interpreter_is_run_by_the_place_that_was_accepted(tmp_path):
    """A yes to `LINK/python` is a yes to where LINK led: pointed elsewhere, it needs a new one."""
    marker = tmp_path / "stranger-ran"
    mine = _stranger_python(tmp_path / "mine" / "bin", tmp_path / "mine-ran").parent
    theirs = _stranger_python(tmp_path / "theirs" / "bin", marker).parent
    link = tmp_path / "env"
    link.symlink_to(mine)
    store = ProfileStore(profiles_dir())
    store.save(Profile("p", LaunchConfig(python=f"{link}/python")))  # saved by its user: accepted
    assert store.load_for_launch("p").config.python == str(mine.resolve() / "python")
    _flip(link, theirs)
    with pytest.raises(UntrustedProfileError, match="runs the interpreter"):
        store.load_for_launch("p")


BUILD = """
import sys
import tensorflow as tf

out, marker = sys.argv[1], sys.argv[2]

class Plain(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def __call__(self, x):
        return {"y": x * 2.0}

class Spy(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def __call__(self, x):
        tf.io.write_file(marker, tf.io.read_file("/etc/hostname"))
        return {"y": x * 2.0}

for name, module in (("plain", Plain()), ("spy", Spy())):
    tf.saved_model.save(module, f"{out}/{name}", signatures=module.__call__)
"""


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> dict[str, Path]:
    """A plain SavedModel and a spy whose graph reads /etc/hostname into a marker when called,
    built in a child (the test worker never imports TensorFlow)."""
    out = tmp_path_factory.mktemp("graphs")
    subprocess.run([sys.executable, "-c", BUILD, str(out), str(out / "marker")], check=True, capture_output=True,
                   timeout=300)
    return {"plain": out / "plain", "spy": out / "spy", "marker": out / "marker"}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _accepted_model(store: ProfileStore, link: Path) -> None:
    """A stranger's profile naming the SavedModel at `link`, accepted as its user would."""
    shared = link.parent / "shared.toml"
    shared.write_text(f'schema_version = 1\n[settings]\nmodel = "{link}"\nsteady = 1\nlog_level = 2\n')
    store.import_file(shared)
    store.accept("shared")


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_saved_model_swapped_in_a_loop_loads_only_the_graph_that_was_accepted(tmp_path, graphs):
    link = tmp_path / "model"
    link.symlink_to(graphs["plain"])
    store = ProfileStore(profiles_dir())
    _accepted_model(store, link)
    accepted = _sha(graphs["plain"] / "saved_model.pb")
    loaded = refused = 0
    with flipping(link, [graphs["spy"], graphs["plain"]]) as flips:
        for _ in range(LOADS):
            try:
                model = Path(store.load_for_launch("shared").config.model)
            except UntrustedProfileError:  # the spy's graph was seen: a new yes is asked
                refused += 1
                continue
            assert _sha(model / "saved_model.pb") == accepted, "the graph loaded is the graph accepted"
            assert not os.path.islink(model / "saved_model.pb") and model.stat().st_mode & 0o077 == 0
            loaded += 1
    print(f"{LOADS} loads ({refused} refused, {loaded} from a private copy), {flips[0]} flips")
    assert refused and loaded, "the race was run: the check saw both"


@pytest.mark.slow
def test_a_saved_model_swapped_after_the_check_runs_the_accepted_graph(tmp_path, graphs):
    """End to end with TensorFlow: the folder swapped for the spy's between the check and the
    load; before the fix the spy's graph ran and wrote its marker."""
    link = tmp_path / "model"
    link.symlink_to(graphs["plain"])
    store = ProfileStore(profiles_dir())
    _accepted_model(store, link)
    config = store.load_for_launch("shared").config
    _flip(link, graphs["spy"])
    record = run_sessions([ProbeSession(config.replace(timeout=240))])[0]
    assert record.status is RunStatus.OK, record.headline
    assert not graphs["marker"].exists(), "the spy's graph ran"


PLAIN_BUILDER = "import helpers\n\ndef build():\n    return helpers.model()\n"
EDITED_BUILDER = "import helpers\nopen(__file__ + '.ran', 'w')\n\ndef build():\n    return helpers.model()\n"


def test_an_edited_builder_needs_a_new_yes_and_a_swapped_one_never_runs(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    builder = code / "bld.py"
    builder.write_text(PLAIN_BUILDER)
    (code / "helpers.py").write_text("def model():\n    return None\n")
    store = ProfileStore(profiles_dir())
    shared = tmp_path / "shared.toml"
    shared.write_text(f'schema_version = 1\n[settings]\nmodel = "{builder}:build"\n')
    store.import_file(shared)
    store.accept("shared")
    copy = store.load_for_launch("shared").config.model.rpartition(":")[0]
    assert Path(copy).read_text() == PLAIN_BUILDER and not os.path.islink(copy)
    assert (Path(copy).parent / "helpers.py").resolve() == (code / "helpers.py"), "its siblings import as before"
    builder.write_text(EDITED_BUILDER)
    assert store.unaccepted_code(store.load("shared")), "the yes was for the file as it was"
    with pytest.raises(UntrustedProfileError, match="builds the model by calling"):
        store.load_for_launch("shared")
    builder.write_text(PLAIN_BUILDER)
    edited = tmp_path / "edited.py"
    edited.write_text(EDITED_BUILDER)
    plain = tmp_path / "plain.py"
    plain.write_text(PLAIN_BUILDER)
    builder.unlink()
    builder.symlink_to(plain)
    loaded = refused = 0
    with flipping(builder, [edited, plain]) as flips:
        for _ in range(LOADS):
            try:
                copy = store.load_for_launch("shared").config.model.rpartition(":")[0]
            except UntrustedProfileError:
                refused += 1
                continue
            assert Path(copy).read_text() == PLAIN_BUILDER
            loaded += 1
    print(f"{LOADS} loads ({refused} refused, {loaded} from a private copy), {flips[0]} flips")
    assert refused and loaded, "the race was run: the check saw both"
