"""The run history under faults: locked by another process, damaged, holding rows no tflaunch
wrote, created by several processes at once, read-only, fed a flood of stderr. Whatever
the file's state, a run is measured and printed, the user is told which file, why and what
to do, and the runs already stored are intact. No TensorFlow: runs use a fake interpreter."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tflaunch.core.cli.main import main
from tflaunch.core.paths import history_path
from tflaunch.core.run.read_back import ReadBack
from tflaunch.core.run.record import RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store import history_file
from tflaunch.core.store.history import SCHEMA_VERSION, History, HistoryError
from tflaunch.core.store.recorder import RunRecorder
from tflaunch.core.store.rows import DAMAGED
from tflaunch.core.store.storable import STDERR_STORED_BYTES
from tflaunch.core.store.stored_values import DamagedRowError, stored_config

from ..builders import finished_record
from .children import fake_python

BUSY_S = 0.3  # the busy timeout in these tests: a lock is found out in a moment, not in 3 s

LOCKER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()  # until the test lets go
"""


@pytest.fixture
def quick_busy(monkeypatch):
    monkeypatch.setattr(history_file, "BUSY_TIMEOUT_S", BUSY_S)


@contextmanager
def locked(path: Path):
    """Another process holds the history's write lock (on a file it creates if need be)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", LOCKER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


@contextmanager
def read_only(path: Path):
    """`path`, a file or a folder, read-only to this process, root included."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    # Root writes through file modes; an immutable file or folder it cannot.
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:
        pytest.skip("running as root, and chattr +i is not available to make a file read-only")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def stored_runs(count: int = 2, samples: int = 0) -> list[int]:
    history = History(history_path())
    ids = []
    for i in range(count):
        record = finished_record(model=f"model-{i:02d}", at=1000.0 + i)
        for j in range(samples):
            record.add_sample(1000.0 + i + 0.5 + j * 0.001, 1000 + j)
        ids.append(history.record(record, "cli"))
    history.close()
    return ids


def assert_intact(run_ids: list[int]) -> None:
    history = History(history_path())
    assert sorted(r.id for r in history.list_runs() if r.status == "ok") == sorted(run_ids)
    for run_id in run_ids:
        assert history.load(run_id).status is RunStatus.OK
    history.close()


def bench(capsys, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    """`tflaunch bench` of a fake interpreter that runs every phase in a few ms."""
    fake = fake_python(tmp_path / "fake", "succeed()")
    code = main(["bench", "--model", "sample:mlp", "--python", fake, *extra])
    out, err = capsys.readouterr()
    return code, out, err


def last_line(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


# -- 1. another process holds the lock ------------------------------------------------------
LOCKED = ("tflaunch: the run history {path} could not be {doing} (database is locked by another process for "
          "more than 0.3 s); this run is not stored. Let the other tflaunch finish, or close the program that "
          "holds it, then try again.")


def test_a_locked_history_costs_the_run_nothing_but_its_storage(capsys, tmp_path, quick_busy):
    kept = stored_runs()
    with locked(history_path()):
        code, out, err = bench(capsys, tmp_path)
    assert code == 0 and "Time to ready" in out, "the results are printed"
    assert last_line(err) == LOCKED.format(path=history_path(), doing="written")
    assert "Traceback" not in err
    assert_intact(kept)


def test_a_locked_history_still_answers_json_first(tmp_path, quick_busy):
    kept = stored_runs()
    fake = fake_python(tmp_path / "fake", "succeed()")
    with locked(history_path()):
        # One stream, as a terminal shows both: the results come first, then the one line.
        done = subprocess.run([sys.executable, "-c", "import sys; from tflaunch.core.store import history_file; "
                               f"history_file.BUSY_TIMEOUT_S = {BUSY_S}; from tflaunch.core.cli.main import main; "
                               "sys.exit(main(sys.argv[1:]))", "bench", "--model", "sample:mlp", "--python", fake,
                               "--json"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert done.returncode == 0, done.stdout
    result, note = done.stdout.rsplit("\n}\n", 1)
    assert json.loads(result[result.index("{"):] + "\n}")["status"] == "ok"
    assert note.strip() == LOCKED.format(path=history_path(), doing="written")
    assert_intact(kept)


def test_a_history_locked_before_tflaunch_could_open_it(capsys, tmp_path, quick_busy):
    with locked(history_path()):  # a new file, locked before it is a WAL database: no one can read it
        code, out, err = bench(capsys, tmp_path)
        with pytest.raises(HistoryError) as error:
            History(history_path())
    assert code == 0 and "Time to ready" in out
    assert last_line(err) == LOCKED.format(path=history_path(), doing="opened")
    assert error.value.kind == "locked" and "Traceback" not in err


def test_a_locked_history_can_still_be_reported_and_a_sweep_still_prints(capsys, tmp_path, quick_busy):
    kept = stored_runs()
    fake = fake_python(tmp_path / "fake", "succeed()")
    with locked(history_path()):
        assert main(["report", str(kept[0]), "-o", str(tmp_path / "run.md")]) == 0, "readers do not wait"
        code = main(["sweep", "--model", "sample:mlp", "--python", fake, "--vary", "intra=1,2", "--repeat", "1",
                     "--warmup", "0"])
    out, err = capsys.readouterr()
    assert code == 0 and "intra=1" in out and "Traceback" not in err
    trials = 3  # the baseline, intra=1 and intra=2, once each
    assert last_line(err) == LOCKED.format(path=history_path(), doing="written").replace(
        "this run is", f"{trials} runs are")
    assert (tmp_path / "run.md").read_text().strip()
    assert_intact(kept)


def test_a_run_waits_for_the_lock_only_at_its_end_and_is_then_stored(tmp_path, quick_busy):
    """Busy at the start (the wait would be measured), free at the end: stored whole."""
    kept = stored_runs()
    history = History(history_path())
    record = finished_record(model="late")
    recorder = RunRecorder(history, "cli")
    with locked(history_path()):
        recorder.started(record)
        recorder.changed(record, None)
    assert record.history_id is None and recorder.problem is None, "a busy moment is not a problem"
    recorder.ended(record)
    assert recorder.note() is None and record.history_id is not None
    assert history.load(record.history_id).samples == record.samples
    assert_intact([*kept, record.history_id])


# -- 2. a damaged file ------------------------------------------------------------------------
def damage_page_holding(path: Path, marker: bytes) -> None:
    """Overwrite, in the middle of the file, the whole page that holds `marker`."""
    data = bytearray(path.read_bytes())
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    at = data.index(marker, len(data) // 4)
    start = at // page * page
    assert 0 < start < len(data) - page, "the damage is in the middle of the file"
    data[start:start + page] = b"\xab" * page
    path.write_bytes(bytes(data))


def damaged_message(path: Path) -> str:
    return (f"the run history {path} is damaged (database disk image is malformed); this run is not stored. "
            f"tflaunch left it untouched. Move it aside (mv {path} {path}.damaged) to start a new one.")


def test_a_damaged_history_is_said_left_untouched_and_runs_still_measured(capsys, tmp_path):
    path = history_path()
    stored_runs(12, samples=300)
    damage_page_holding(path, b"model-06")
    before = path.read_bytes()
    with pytest.raises(HistoryError) as error:
        History(path)
    assert str(error.value) == (f"The run history {path} is damaged (database disk image is malformed). tflaunch "
                                f"left it untouched. Move it aside (mv {path} {path}.damaged) to start a new one.")
    code, out, err = bench(capsys, tmp_path)
    assert code == 0 and "Time to ready" in out
    assert last_line(err) == f"tflaunch: {damaged_message(path)}"
    assert main(["report", "1", "-o", str(tmp_path / "run.md")]) == 1
    assert last_line(capsys.readouterr().err) == f"tflaunch: {error.value}"
    assert path.read_bytes() == before, "left untouched"
    path.rename(f"{path}.damaged")  # as the message says: a new history starts
    assert History(path).list_runs() == []


def test_damage_met_in_one_run_stops_writing_and_spares_the_others(tmp_path):
    path = history_path()
    kept = stored_runs(6, samples=600)
    db = sqlite3.connect(path)
    size = db.execute("PRAGMA page_size").fetchone()[0]
    try:
        leaves = db.execute("SELECT pageno FROM dbstat WHERE name='samples' AND pagetype='leaf'"
                            " ORDER BY pageno").fetchall()
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to find a page of samples")
    finally:
        db.close()
    page = leaves[len(leaves) // 2][0]
    data = bytearray(path.read_bytes())
    data[(page - 1) * size:page * size] = b"\xab" * size
    path.write_bytes(bytes(data))
    history = History(path)
    assert len(history.list_runs()) == len(kept), "the list does not read samples"
    broken = []
    for run_id in kept:
        try:
            history.load(run_id)
        except HistoryError as exc:
            broken.append(run_id)
            assert exc.kind == "damaged" and str(path) in str(exc) and "Move it aside" in str(exc)
    assert 1 <= len(broken) <= 2, "only the runs whose samples were on that page"
    before = path.read_bytes()
    recorder = RunRecorder(history, "cli")
    record = finished_record()
    recorder.started(record)
    recorder.ended(record)
    assert recorder.note() == damaged_message(path)
    assert path.read_bytes() == before, "nothing is written to a damaged file"


# -- 3. rows no tflaunch wrote --------------------------------------------------------------------
# (SQL run on the second of two stored runs, what the list shows for it, the reason given)
BAD_ROWS = [
    ("UPDATE runs SET peak_rss = 99999999999999999999999 WHERE id = :id", DAMAGED, "peak_rss is 1e+23"),
    ("UPDATE runs SET time_to_ready = 9e999 WHERE id = :id", DAMAGED, "time_to_ready is inf"),
    ("UPDATE runs SET launched_at = 'yesterday' WHERE id = :id", DAMAGED, "launched_at is 'yesterday'"),
    ("""UPDATE runs SET config = '{"visible_gpus": ["x"]}' WHERE id = :id""", DAMAGED, "config cannot be read"),
    ("""UPDATE runs SET config = '{"intra": "lots"}' WHERE id = :id""", DAMAGED, "config intra is 'lots'"),
    ("""UPDATE runs SET config = '{"timeout": 1e400}' WHERE id = :id""", DAMAGED, "config holds 1e400"),
    ("""UPDATE runs SET config = '{"memory_limit_mb": 1e300}' WHERE id = :id""", DAMAGED, "config memory_limit"),
    ("UPDATE runs SET config = 'not json' WHERE id = :id", DAMAGED, "config is not valid JSON"),
    ("UPDATE runs SET status = 'weird' WHERE id = :id", DAMAGED, "status is 'weird'"),
    ("""UPDATE runs SET model_info = '{"inputs": NaN}' WHERE id = :id""", DAMAGED, "model_info holds NaN"),
    ("""UPDATE runs SET failure = '{"kind": 1}' WHERE id = :id""", "ok", "failure kind is 1"),
    ("UPDATE runs SET settings = '[1]' WHERE id = :id", "ok", "settings is list"),
    ("UPDATE runs SET stderr_tail = x'00ff' WHERE id = :id", "ok", "stderr_tail is b'"),
    ("UPDATE runs SET exit_code = 1.5 WHERE id = :id", "ok", "exit_code is 1.5"),
    ("UPDATE phases SET state = 'bogus' WHERE run_id = :id", "ok", "state is 'bogus'"),
    ("""UPDATE phases SET latency = '{"median": Infinity}' WHERE run_id = :id""", "ok", "latency holds Infinity"),
    ("UPDATE phases SET duration = -1 WHERE run_id = :id", "ok", "duration is -1"),
    ("UPDATE samples SET rss = 'lots' WHERE run_id = :id", "ok", "sample rss is 'lots'"),
    ("UPDATE runs SET command = '[1, 2]' WHERE id = :id", "ok", "command holds something other than text"),
    # Found from outside: times out of range took every table down with them.
    ("UPDATE runs SET launched_at = 1e20 WHERE id = :id", DAMAGED,
     "launched_at is 1e+20, not a time from 1970 to 2286"),
    ("UPDATE runs SET launched_at = -1 WHERE id = :id", DAMAGED, "launched_at is -1.0, not a time"),
    ("UPDATE runs SET launched_at = 'NaN' WHERE id = :id", DAMAGED, "launched_at is 'NaN', not a time"),
    ("UPDATE runs SET finished_at = 1e20 WHERE id = :id", "ok", "finished_at is 1e+20, not a time"),
    ("UPDATE runs SET time_to_ready = -2 WHERE id = :id", DAMAGED, "time_to_ready is -2.0, not a number of seconds"),
    ("UPDATE runs SET writer_pid = 'me' WHERE id = :id", "ok", "writer_pid is 'me', not a whole number"),
    ("UPDATE runs SET stopped_at_ready = 7 WHERE id = :id", "ok", "stopped_at_ready is 7, not 0 or 1"),
    ("UPDATE phases SET duration = 'long' WHERE run_id = :id", "ok", "duration is 'long', not a number of seconds"),
    ("UPDATE phases SET started = 1e20 WHERE run_id = :id", "ok", "start is 1e+20, not a time"),
    ("UPDATE samples SET t = 'soon' WHERE run_id = :id", "ok", "sample time is 'soon'"),
]


@pytest.mark.parametrize(("sql", "listed", "reason"), BAD_ROWS, ids=[r[2] for r in BAD_ROWS])
def test_a_row_no_tflaunch_wrote_is_listed_damaged_and_refused_with_its_reason(capsys, tmp_path, sql, listed,
                                                                                 reason):
    good, bad = stored_runs()
    with sqlite3.connect(history_path()) as db:
        db.execute(sql, {"id": bad})
    history = History(history_path())
    runs = {r.id: r for r in history.list_runs()}
    assert runs[good].status == "ok" and runs[bad].status == listed
    if listed == DAMAGED:
        assert reason in runs[bad].damage and runs[bad].model == "model-01"
    with pytest.raises(HistoryError) as error:
        history.load(bad)
    assert str(error.value).startswith(f"Run {bad} in the run history {history_path()} is damaged (")
    assert reason in str(error.value) and error.value.kind == "damaged run"
    assert history.load(good).status is RunStatus.OK
    assert main(["report", str(bad), "-o", str(tmp_path / "bad.md")]) == 1
    assert last_line(capsys.readouterr().err) == f"tflaunch: {error.value}"
    history.record(finished_record(), "cli")  # the file itself is fine: it takes new runs


@pytest.mark.parametrize(("column", "said"), [("model_info", '{"params": "many", "inputs": 3}'),
                                               ("environment", '{"gpus": 7, "tensorflow": ["2.21"]}')])
def test_a_description_s_figure_of_the_wrong_type_costs_the_run_nothing(column, said):
    """A child's model and environment are stored as it said them: a figure of the wrong type
    (its `"gpus": 7`) once made its run damaged in the history, though the run had read it as
    none. It reads back the same way: the run loads, the figure is none, the rest is there."""
    good, bad = stored_runs()
    with sqlite3.connect(history_path()) as db:
        db.execute(f"UPDATE runs SET {column} = :said WHERE id = :id", {"said": said, "id": bad})
    history = History(history_path())
    assert {r.id: r.status for r in history.list_runs()}[bad] == "ok"
    record, other = history.load(bad), history.load(good)
    if column == "model_info":
        assert (record.model.params, record.model.inputs, other.model.params) == (None, (), 5)
    else:
        assert (record.environment.gpus, record.environment.tensorflow, other.environment.tensorflow) == (
            None, None, "2.21.0")
    assert record.status is RunStatus.OK and record.phases.keys() == other.phases.keys()


def test_figures_out_of_range_are_stored_as_nothing_and_the_run_still_ends():
    """A child that reported a peak beyond 2**63 once left its run "running" for ever."""
    record = finished_record()
    record.phases["load"].peak_rss = 1 << 64
    record.phases["trace"].duration = float("nan")
    record.phases["steady"].latency = {"n": 3, "median": float("inf")}
    record.settings = ReadBack({"intra_op_threads": float("nan"), "deep": [{"x": float("-inf")}]})
    record.samples.append((float("inf"), 5))
    record.samples.append((2.0, 1 << 70))
    record.exit_code = 1 << 80
    record.add_stderr("bad \udcff surrogate")
    history = History(history_path())
    recorder = RunRecorder(history, "cli")
    recorder.started(record)
    recorder.ended(record)
    assert recorder.note() is None and recorder.problem is None
    stored = history.load(record.history_id)
    assert stored.status is RunStatus.OK, "not left running"
    assert stored.phases["load"].peak_rss is None and stored.phases["trace"].duration is None
    assert stored.phases["steady"].latency == {"n": 3, "median": None}
    assert stored.settings.described == {"intra_op_threads": None, "deep": [{"x": None}]}
    assert stored.samples == record.samples[:-2] and stored.exit_code is None
    assert History(history_path()).list_runs()[0].status == "ok"


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)
FIELDS = st.sampled_from(["model", "python", "intra", "inter", "xla", "xla_auto", "jit_compile", "onednn",
                          "log_level", "visible_gpus", "memory_growth", "memory_limit_mb", "batch", "inputs",
                          "signature", "imports", "unsafe_deserialization", "steady", "extra_env", "timeout"])


@given(st.dictionaries(FIELDS, JSON, max_size=6))
def test_any_stored_config_is_read_or_refused_as_damage_never_raised(data):
    try:
        config = stored_config(json.dumps(data))
    except DamagedRowError:
        return
    assert isinstance(config, LaunchConfig) and isinstance(config.summary(), str)
    json.dumps(config.to_dict(), allow_nan=False)


# -- 4. several processes create the history at once ----------------------------------------------
def _open(path: str, barrier, results) -> None:
    barrier.wait()
    try:
        History(Path(path)).close()
        results.put("ok")
    except Exception as exc:  # noqa: BLE001 (the test reports whatever went wrong)
        results.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("round_", range(3))
def test_twelve_processes_creating_the_history_at_once_all_succeed(tmp_path, round_):
    path = tmp_path / f"new-{round_}" / "history.sqlite3"
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(12), context.Queue()
    openers = [context.Process(target=_open, args=(str(path), barrier, results)) for _ in range(12)]
    for opener in openers:
        opener.start()
    outcomes = [results.get(timeout=60) for _ in openers]
    for opener in openers:
        opener.join(timeout=30)
    assert outcomes == ["ok"] * 12
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"runs", "phases", "samples", "sweeps"} <= tables
    columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
    assert len(columns) == len(set(columns)) and {"command", "sweep_id", "trial"} <= set(columns)
    History(path).record(finished_record(), "cli")


# -- 5. a read-only history -----------------------------------------------------------------------
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_history_is_read_and_runs_are_measured_not_stored(capsys, tmp_path, what):
    kept = stored_runs()
    path = history_path()
    with read_only(path if what == "file" else path.parent):
        history = History(path)
        assert history.read_only is not None and [r.id for r in history.list_runs()] == kept[::-1]
        assert history.load(kept[0]).status is RunStatus.OK
        assert main(["report", f"{kept[0]},{kept[1]}", "-o", str(tmp_path / "compare.md")]) == 0
        code, out, err = bench(capsys, tmp_path)
        why = "no permission to write the file" if what == "file" else f"the folder {path.parent} is read-only"
        assert code == 0 and "Time to ready" in out
        assert last_line(err) == (
            f"tflaunch: the run history {path} is read-only ({why}); this run is not stored. To store runs, make "
            f"it writable (chmod u+w {path}, and its folder) or set TFLAUNCH_DATA_DIR to a writable folder.")
    assert "compare" in (tmp_path / "compare.md").read_text().lower()
    assert_intact(kept)


def test_a_history_that_cannot_be_created_is_said(capsys, tmp_path):
    folder = history_path().parent
    folder.mkdir(parents=True)
    with read_only(folder):
        code, out, err = bench(capsys, tmp_path)
    assert code == 0 and "Time to ready" in out
    assert last_line(err).startswith(f"tflaunch: the run history {history_path()} cannot be created (the folder "
                                     f"{folder} is read-only); this run is not stored. To store runs")


# -- 6. a flood of stderr -----------------------------------------------------------------------
def test_a_runs_stored_stderr_is_capped_and_keeps_the_end():
    record = finished_record()  # its tail filled around the record's own cap, as an older version's was
    record.stderr_tail.extend(f"line {i:03d} " + "é" * 5000 for i in range(199))
    record.stderr_tail.append("the last line says why")
    history = History(history_path())
    run_id = history.record(record, "cli")
    stored = history._db.execute("SELECT stderr_tail FROM runs WHERE id=?", (run_id,)).fetchone()[0]
    assert len(stored.encode()) <= STDERR_STORED_BYTES
    first, *rest = stored.splitlines()
    assert first.startswith("[… ") and first.endswith(" earlier bytes of output not stored …]")
    assert rest[-1] == "the last line says why" and all(line.startswith("line ") for line in rest[:-1])
    assert list(history.load(run_id).stderr_tail)[-1] == "the last line says why"


# -- 7. a full disk ---------------------------------------------------------------------------
# Run in a child whose disk refuses to grow any file: every command a user reads the history
# with, the History tab's reader, and a run that cannot be stored. Prints what each said.
