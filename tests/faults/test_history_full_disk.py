"""A full disk: the history it holds can still be read (list, show, export, report, the
History tab's reader), and a write is refused with the reason, leaving the file untouched."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tflaunch.core.paths import history_path

from .test_history_faults import stored_runs

ON_A_FULL_DISK = """
import contextlib, hashlib, io, json, sys
from pathlib import Path
from tflaunch.core.cli.main import main
from tflaunch.core.store.history import History, HistoryError
from tflaunch.core.store.run_pages import RunPages
from tflaunch.core.paths import history_path

before = hashlib.sha256(history_path().read_bytes()).hexdigest()
said = {}
for name, argv in {"list": ["history", "list", "--json"], "show": ["history", "show", "1"],
                   "export": ["history", "export", "--format", "csv"],
                   "report": ["report", "1", "-o", "/dev/stdout", "--format", "md"]}.items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    said[name] = [code, out.getvalue(), err.getvalue()]
history = History(history_path())
said["read_only"] = [history.read_only.kind, str(history.read_only)]
try:
    history.delete([1])
except HistoryError as exc:
    said["delete"] = str(exc)
pages = RunPages(history_path())
said["pages"] = [pages.total, [run.status for run in pages.next_page()]]
said["untouched"] = hashlib.sha256(history_path().read_bytes()).hexdigest() == before
print(json.dumps(said))
"""

HOLD_OPEN = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("SELECT COUNT(*) FROM runs").fetchone()  # WAL: its -wal and -shm stay while this lives
print("open", flush=True)
sys.stdin.read()
"""


def full_disk_history(folder: Path) -> Path:
    """Two finished runs and one left "running" by a writer long gone, in a closed file."""
    os.environ["TFLAUNCH_DATA_DIR"] = str(folder)
    ids = stored_runs(2)
    with contextlib.closing(sqlite3.connect(history_path(), isolation_level=None)) as db:
        db.execute("UPDATE runs SET status = 'running', writer_pid = 0 WHERE id = ?", (ids[1],))
    return history_path()


def assert_read_on_a_full_disk(done: subprocess.CompletedProcess, cause: str) -> dict:
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])
    code, out, err = said["list"]
    assert code == 0 and [run["status"] for run in json.loads(out)["runs"]] == ["running", "ok"]
    path = history_path()
    note = f"tflaunch: the run history {path} could not be written ({cause})."
    assert err.splitlines() == [note + err.splitlines()[0].removeprefix(note)], "said once, on one line"
    assert "until then runs are measured and shown but not stored" in err
    for name in ("show", "export", "report"):
        code, out, err = said[name]
        assert code == 0 and out and "Traceback" not in err, (name, err)
    assert said["read_only"][0] == "full"
    assert said["delete"].startswith(f"The run history {path} could not be written ({cause}).")
    assert said["pages"] == [2, ["running", "ok"]], "the History tab's reader reads it too"
    assert said["untouched"]
    return said


def _no_file_may_grow() -> None:
    # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG instead of killing it.
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))


@pytest.mark.parametrize("held_open", [False, True], ids=["closed", "held open by another process"])
def test_a_history_on_a_disk_that_refuses_writes_is_still_read(tmp_path, held_open):
    """No file may grow (RLIMIT_FSIZE 0: writes fail with EFBIG, not ENOSPC, on a disk with
    room): closed, the history cannot make its WAL index and is read as it is; held open by
    another process, the index exists and the write at open (marking a dead writer's run
    interrupted) fails and is skipped."""
    path = full_disk_history(tmp_path / "data")
    with contextlib.ExitStack() as stack:
        if held_open:
            holder = subprocess.Popen([sys.executable, "-c", HOLD_OPEN, str(path)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
            stack.callback(holder.wait, 30)
            stack.callback(holder.stdin.close)
            assert holder.stdout.readline().strip() == "open"
        done = subprocess.run([sys.executable, "-c", ON_A_FULL_DISK], capture_output=True, text=True, timeout=60,
                              preexec_fn=_no_file_may_grow)
    assert_read_on_a_full_disk(done, "a disk error: disk I/O error")


def _can_mount_a_tmpfs() -> bool:
    probe = "mount -t tmpfs -o size=64k tmpfs /mnt"
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-rm", "sh", "-c", probe], capture_output=True).returncode == 0


def test_a_history_on_a_really_full_disk_is_still_read(tmp_path):
    """A real full disk: a 256 KiB tmpfs, filled to the last block, in a mount namespace of
    the test's own (where the kernel lets a user make one)."""
    if not _can_mount_a_tmpfs():
        pytest.skip("no mount namespace for a small tmpfs here (unshare -rm refused)")
    path = full_disk_history(tmp_path / "data")
    disk = tmp_path / "disk"
    disk.mkdir()
    fill = (f"mount -t tmpfs -o size=256k tmpfs {disk} && cp {path} {disk}/ && "
            f"(dd if=/dev/zero of={disk}/filler bs=4k 2>/dev/null; true) && "
            f'TFLAUNCH_DATA_DIR={disk} exec "$0" -c "$1"')
    done = subprocess.run(["unshare", "-rm", "sh", "-c", fill, sys.executable, ON_A_FULL_DISK],
                          capture_output=True, text=True, timeout=60)
    os.environ["TFLAUNCH_DATA_DIR"] = str(disk)  # the paths the child printed
    assert_read_on_a_full_disk(done, "the disk is full")
