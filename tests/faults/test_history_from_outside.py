"""History rows with bytes no tflaunch wrote (issue 33): a value that is not UTF-8 is shown
escaped, in its own row; every other run stays listed, exported and reported, and the
damaged row can be deleted. Each case failed before its fix (sqlite3 raised for the query)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys

import pytest
from PySide6.QtCore import Qt

from tflaunch.core.cli.main import main
from tflaunch.core.paths import history_path
from tflaunch.core.store.history import History

from .test_history_faults import stored_runs

# Columns the listing reads, each given bytes that are not UTF-8 (and an escape sequence).
COLUMNS = ["model", "source", "status", "failed_phase", "config", "model_info"]


@pytest.mark.parametrize("column", COLUMNS)
def test_a_column_that_is_not_utf8_loses_its_row_at_most(capsys, tmp_path, column):
    good, bad = stored_runs()
    with sqlite3.connect(history_path()) as db:
        db.execute(f"UPDATE runs SET {column} = CAST(x'1b5b324bff41' AS TEXT) WHERE id = ?", (bad,))
    runs = {r.id: r for r in History(history_path()).list_runs()}
    assert runs[good].status == "ok" and set(runs) == {good, bad}
    assert main(["history", "list"]) == 0 or column in ("config", "model_info", "status")
    out = capsys.readouterr().out
    assert "model-00" in out and "\x1b" not in out and "\udcff" not in out
    if column == "model":
        assert "\\x1b[2K\\xffA" in out, "the bytes are shown as what they are"
    assert main(["history", "export", "-o", str(tmp_path / "all.json")]) in (0, 1)
    exported = json.loads((tmp_path / "all.json").read_text())
    assert good in [run["id"] for run in exported["runs"]]
    assert main(["report", str(good), "-o", str(tmp_path / "good.md")]) == 0
    assert main(["history", "delete", str(bad), "--yes"]) == 0
    assert [r.id for r in History(history_path()).list_runs()] == [good]


def test_delete_says_nothing_was_deleted_with_its_exit_code(capsys):
    stored_runs()
    assert main(["history", "delete", "--model", "no-such-model", "--yes"]) == 1
    assert "nothing deleted" in capsys.readouterr().out


READ_ONLY_MOUNT = """
import os, sys
from pathlib import Path
from tflaunch.core.store.history import History, HistoryError
try:
    History(Path(sys.argv[1]) / "history.sqlite3")
except HistoryError as exc:
    print(exc.what, exc.advice, sep="\\n")
"""


def test_a_read_only_mount_is_not_advised_chmod(tmp_path):
    """EROFS: permissions cannot help, so the advice must not say chmod (it did)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed: no read-only mount can be made here")
    folder = tmp_path / "ro"
    folder.mkdir()
    script = (f"mount -t tmpfs -o ro tmpfs {folder} && exec {sys.executable} -c '{READ_ONLY_MOUNT}' {folder}")
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    if "mount" in done.stderr and done.returncode != 0:
        pytest.skip(f"a read-only mount cannot be made here: {done.stderr.strip()}")
    assert "its file system is mounted read-only" in done.stdout, done.stdout + done.stderr
    assert "chmod" not in done.stdout and "TFLAUNCH_DATA_DIR" in done.stdout


def test_the_history_tab_lists_every_run_beside_one_that_is_not_utf8(make_window):
    good, bad = stored_runs()
    with sqlite3.connect(history_path()) as db:
        db.execute("UPDATE runs SET model = CAST(x'1b5b324bff41' AS TEXT) WHERE id = ?", (bad,))
    view = make_window().history_view
    rows = {view.model.item(r, 0).data(Qt.ItemDataRole.UserRole): r for r in range(view.model.rowCount())}
    assert set(rows) == {good, bad}
    shown_model = " ".join(view.model.item(rows[bad], c).text() for c in range(view.model.columnCount()))
    assert "\\xff" in shown_model and "\udcff" not in shown_model


@pytest.mark.parametrize("column", ["model", "config"])
def test_a_value_larger_than_any_run_writes_is_listed_as_damage_not_read(column):
    good, bad = stored_runs()
    with sqlite3.connect(history_path()) as db:
        db.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", ("x" * (3 << 20), bad))
    runs = {r.id: r for r in History(history_path()).list_runs()}
    assert runs[good].status == "ok" and runs[bad].status == "damaged"
    assert f"{column} is {3 << 20} bytes, more than tflaunch lists" in runs[bad].damage
    assert len(runs[bad].model) < 100
    assert main(["history", "delete", str(bad), "--yes"]) == 0
