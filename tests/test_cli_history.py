"""`tflaunch history list|show|delete|export`: the ids `tflaunch report` takes, found from a
terminal. The history is filled through core (no TensorFlow, no child runs)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sqlite3
from datetime import datetime

import pytest

from tflaunch.core.cli.main import main
from tflaunch.core.paths import history_path
from tflaunch.core.run import events as ev
from tflaunch.core.store import history_file
from tflaunch.core.store.history import History, HistoryError

from .builders import finished_record, record_through, tflaunch
from .faults.test_history_faults import locked, read_only

DAY = 86400.0
T0 = datetime(2026, 11, 1, 12, 0).timestamp()  # local noon


def failed_record(at: float):
    """A run that failed loading its model, with stderr saying why."""
    record = record_through(["import", "devices"], launched=at)
    record.add_stderr("Traceback (most recent call last):")
    record.add_stderr("OSError: Unable to open file /models/big.h5")
    record.apply(ev.PhaseStart(at + 2.5, "load"))  # as the probe does: a phase starts, then fails
    record.apply(ev.ProbeError(at + 3, "load", "model_unreadable", "The model /models/big.h5 could not be read.",
                               "OSError: Unable to open file"))
    record.finish(1)
    return record


@pytest.fixture
def runs() -> dict[str, int]:
    """Five runs over five days, one of each kind the list marks, and a damaged row."""
    history = History(history_path())
    assumed = finished_record(model="/models/resnet.keras", at=T0 + 1 * DAY)
    assumed.model = assumed.model.told({"inputs": [{"name": "image", "fed_shape": [1, 224, 224, 3], "assumed": True}],
                                        "outputs_finite": False})
    ids = {
        "ok": history.record(finished_record(intra=2, at=T0), "cli"),
        "assumed": history.record(assumed, "app"),
        "failed": history.record(failed_record(T0 + 2 * DAY), "cli"),
        "other": history.record(finished_record(model="sample:cnn", at=T0 + 3 * DAY), "cli"),
        "damaged": history.record(finished_record(model="model-x", at=T0 + 4 * DAY), "cli"),
    }
    history.close()
    with sqlite3.connect(history_path()) as db:
        db.execute("UPDATE runs SET peak_rss = 99999999999999999999999 WHERE id = ?", (ids["damaged"],))
    return ids


def history_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["history", *args])
    out, err = capsys.readouterr()
    return code, out, err


def no_run(run_id: int) -> str:
    return f"tflaunch: no run {run_id} in {history_path()}; `tflaunch history list` shows the ids.\n"


# -- list ----------------------------------------------------------------------------------------
def test_list_gives_the_ids_report_takes_with_units_and_marks(capsys, tmp_path, runs):
    code, out, err = history_cli(capsys, "list")
    assert code == 0 and err == ""
    header, rule, *rows = out.split("\n\n")[0].splitlines()
    assert header.split() == ["ID", "When", "Model", "Settings", "Ready", "Peak", "memory", "Status"]
    assert [int(row.split()[0]) for row in rows] == sorted(runs.values(), reverse=True), "newest first"
    by_id = {int(row.split()[0]): row for row in rows}
    assert by_id[runs["ok"]].split()[1:] == ["2026-11-01", "12:00", "sample:mlp", "intra=2", "1.02", "s", "0.0",
                                             "MiB", "ok"]
    assert by_id[runs["assumed"]].endswith("ok (assumed input shape, outputs not finite)")
    assert by_id[runs["failed"]].endswith("failed (load)")
    assert by_id[runs["damaged"]].endswith("DAMAGED")
    assert (f"Run {runs['damaged']} cannot be read: peak_rss is 1e+23, not a whole number from 0 to "
            f"9223372036854775807. Delete it with `tflaunch history delete {runs['damaged']}`") in out
    assert main(["report", str(runs["failed"]), "-o", str(tmp_path / "run.md")]) == 0, "a listed id is reportable"


def test_list_filters_by_model_status_and_dates(capsys, runs):
    def ids(*args: str) -> list[int]:
        code, out, _ = history_cli(capsys, "list", "--json", *args)
        assert code == 0
        return [run["id"] for run in json.loads(out)["runs"]]

    assert ids("--model", "mlp") == [runs["failed"], runs["ok"]], "the model contains the text"
    assert ids("--status", "failed") == [runs["failed"]]
    assert ids("--status", "damaged,timed-out") == [runs["damaged"]]
    assert ids("--since", "2026-11-02", "--until", "2026-11-03") == [runs["failed"], runs["assumed"]], \
        "--until a date includes that day"
    assert ids("--since", "2026-11-03 12:00") == [runs["damaged"], runs["other"], runs["failed"]], "local time"
    assert ids("--since", "2026-11-03T12:00:01") == [runs["damaged"], runs["other"]]
    assert ids("--limit", "2") == [runs["damaged"], runs["other"]]
    code, out, _ = history_cli(capsys, "list", "--json", "--model", "mlp")
    listed = json.loads(out)
    assert listed["history"] == str(history_path()) and listed["more"] is False
    ok = next(run for run in listed["runs"] if run["id"] == runs["ok"])
    assert ok["time_to_ready"] == pytest.approx(1.02) and ok["peak_rss"] == 400 and ok["settings"] == "intra=2"
    code, out, _ = history_cli(capsys, "list", "--limit", "2")
    assert "more match (--limit N shows more)" in out


@pytest.mark.parametrize(("args", "says"), [
    (["--since", "2026-13-01"], "argument --since: expected a date (2026-11-01), a local date and time "
                                "('2026-11-01 14:30') or an age (7d, 12h), not '2026-13-01'"),
    (["--status", "fine"], "argument --status: expected one or more of running, ok, failed, cancelled, timed-out, "
                           "interrupted, damaged (comma-separated), not 'fine'"),
    (["--since", "2026-11-05", "--until", "2026-11-01"], "--since (2026-11-05T00:00:00"),
])
def test_a_bad_filter_names_the_input_and_the_format_expected(capsys, runs, args, says):
    code, out, err = history_cli(capsys, "list", *args)
    assert code == 2 and says in err and out == ""


def test_no_history_yet_is_said_and_not_created(capsys):
    code, out, _ = history_cli(capsys, "list")
    assert code == 0 and out.startswith(f"No runs yet: there is no history at {history_path()}.")
    assert history_cli(capsys, "show", "3")[2] == no_run(3)
    assert not history_path().exists(), "reading does not create the history"


# -- show ----------------------------------------------------------------------------------------
def test_show_prints_one_run_in_full(capsys, runs):
    code, out, _ = history_cli(capsys, "show", str(runs["failed"]))
    assert code == 0
    assert out.startswith(f"Run {runs['failed']}, launched 2026-11-03 12:00:00: Failed in Load: The model "
                          "/models/big.h5 could not be read.")
    assert re.search(r"Import +1.00 s", out) and "Load (failed)" in out, "the phase table of bench"
    assert "Why it failed (model_unreadable, in load): The model /models/big.h5 could not be read." in out
    assert "Last 2 of 2 stored stderr lines:\n  | Traceback (most recent call last):\n  | OSError: Unable" in out
    assert "Interpreter: " in out and "Exit: code 1" in out
    code, out, _ = history_cli(capsys, "show", str(runs["ok"]), "--json")
    shown = json.loads(out)
    assert shown["id"] == runs["ok"] and shown["phases"]["load"]["duration"] == pytest.approx(0.2)
    assert shown["environment"] == {"tensorflow": "2.21.0"} and shown["settings"] == {"intra_op_threads": 2}


def test_an_unknown_or_damaged_run_is_refused_with_what_to_do(capsys, runs):
    code, out, err = history_cli(capsys, "show", "42")
    assert (code, out, err) == (1, "", no_run(42))
    code, out, err = history_cli(capsys, "show", "42", "--json")
    assert json.loads(out)["failure"]["kind"] == "no_such_run"
    code, _, err = history_cli(capsys, "show", str(runs["damaged"]))
    assert code == 1 and err == (
        f"tflaunch: run {runs['damaged']} in the run history {history_path()} is damaged (peak_rss is 1e+23, not a "
        "whole number from 0 to 9223372036854775807); it cannot be shown, the other runs are not affected. Delete "
        f"it with `tflaunch history delete {runs['damaged']}`.\n")


# -- delete --------------------------------------------------------------------------------------
def remaining() -> list[int]:
    history = History(history_path())
    try:
        return sorted(run.id for run in history.list_runs())
    finally:
        history.close()


def test_delete_asks_for_confirmation_off_a_terminal_takes_yes_and_says_what_it_deleted(capsys, runs):
    everything = remaining()
    code, _, err = history_cli(capsys, "delete", str(runs["ok"]))
    assert code == 1 and err == ("tflaunch: nothing deleted: deleting 1 run needs confirmation; run it in a terminal "
                                 "to be asked, or add --yes.\n")
    assert remaining() == everything
    assert history_cli(capsys, "delete", str(runs["ok"]), "42", "--yes")[2] == no_run(42), "no id, nothing deleted"
    assert remaining() == everything
    code, out, _ = history_cli(capsys, "delete", str(runs["ok"]), str(runs["damaged"]), "--yes")
    assert code == 0 and out == f"Deleted 2 runs ({runs['damaged']}, {runs['ok']}) from {history_path()}.\n"
    code, out, _ = history_cli(capsys, "delete", "--status", "failed", "--yes", "--json")
    assert code == 0 and json.loads(out)["deleted"] == [runs["failed"]]
    assert remaining() == sorted([runs["assumed"], runs["other"]])
    code, _, err = history_cli(capsys, "delete")
    assert code == 2 and "delete needs the runs to delete: ids (tflaunch history delete 12 15) or filters" in err


def test_a_run_still_being_measured_is_not_deleted(capsys, runs):
    history = History(history_path())
    live = history.begin(finished_record(at=T0 + 5 * DAY), "cli")  # this process writes it: alive
    code, _, err = history_cli(capsys, "delete", str(live), "--yes")
    assert code == 1 and err.startswith(f"tflaunch: run {live} is still running")
    code, out, _ = history_cli(capsys, "delete", "--since", "2026-11-05", "--yes")
    assert code == 0 and out == (f"Deleted 1 run ({runs['damaged']}) from {history_path()}. 1 run still running "
                                 "left alone.\n")
    assert live in remaining()
    history.close()


@pytest.mark.parametrize(("answer", "left"), [("n", 5), ("y", 4)])
def test_delete_on_a_terminal_asks_first(runs, answer, left):
    leader, follower = os.openpty()
    os.write(leader, f"{answer}\n".encode())
    try:
        done = tflaunch("history", "delete", str(runs["ok"]), stdin=follower, timeout=30)
    finally:
        os.close(follower)
        os.close(leader)
    assert f"Delete this run from {history_path()}? [y/N]" in done.stdout
    assert len(remaining()) == left
    assert done.returncode == (0 if answer == "y" else 1)


# -- export --------------------------------------------------------------------------------------
def test_export_csv_has_numbers_with_units_in_the_header(capsys, tmp_path, runs):
    with sqlite3.connect(history_path()) as db:  # listed fine, refused when loaded whole
        db.execute("UPDATE phases SET state = 'bogus' WHERE run_id = ?", (runs["other"],))
    code, out, err = history_cli(capsys, "export", "--format", "csv")
    assert code == 0
    rows = {int(row["id"]): row for row in csv.DictReader(io.StringIO(out))}
    ok = rows[runs["ok"]]
    assert float(ok["time_to_ready_s"]) == pytest.approx(1.02) and int(ok["peak_rss_bytes"]) == 400
    assert float(ok["load_s"]) == pytest.approx(0.2) and float(ok["steady_median_per_call_s"]) == 0.001
    assert ok["settings"] == "intra=2" and ok["status"] == "ok" and ok["tensorflow"] == "2.21.0"
    assert ok["assumed_input_shape"] == "false", "a spreadsheet's boolean, never Python's False"
    assert float(ok["launched_unix_s"]) == T0 and ok["launched"].startswith("2026-11-01T12:00:00")
    assert rows[runs["failed"]]["failure"] == "The model /models/big.h5 could not be read."
    assert rows[runs["failed"]]["time_to_ready_s"] == "", "no figure is an empty cell, not a dash"
    damaged = rows[runs["damaged"]]
    assert damaged["status"] == "damaged" and damaged["damage"].startswith("peak_rss is 1e+23")
    assert f"tflaunch: run {runs['damaged']} cannot be read and is exported as damaged (peak_rss is 1e+23" in err
    assert rows[runs["other"]]["status"] == "damaged" and "state is 'bogus'" in rows[runs["other"]]["damage"]

    target = tmp_path / "runs.json"
    code, _, err = history_cli(capsys, "export", str(runs["ok"]), str(runs["failed"]), "-o", str(target))
    assert code == 0 and err == f"tflaunch: wrote 2 runs as JSON to {target}\n"
    exported = json.loads(target.read_text())["runs"]
    assert [run["id"] for run in exported] == [runs["failed"], runs["ok"]]
    assert exported[1]["time_to_ready"] == pytest.approx(1.02) and exported[1]["memory_samples"][-1] == [1.0, 400]
    assert history_cli(capsys, "export", "42")[2] == no_run(42)


# -- the history's own troubles --------------------------------------------------------------------
def test_a_damaged_history_is_said_in_its_own_words(capsys):
    history_path().parent.mkdir(parents=True)
    history_path().write_bytes(b"not a database" * 100)
    with pytest.raises(HistoryError) as error:
        History(history_path())
    said = str(error.value)
    code, _, err = history_cli(capsys, "list")
    assert code == 1 and err == f"tflaunch: {said[0].lower()}{said[1:]}\n"
    assert "Move it aside (mv" in err


def test_a_read_only_or_locked_history_is_listed_and_deleting_says_why_not(capsys, runs, monkeypatch):
    monkeypatch.setattr(history_file, "BUSY_TIMEOUT_S", 0.3)
    with read_only(history_path()):
        assert history_cli(capsys, "list")[0] == 0
        code, _, err = history_cli(capsys, "delete", str(runs["ok"]), "--yes")
    assert code == 1 and err == (
        f"tflaunch: the run history {history_path()} is read-only (no permission to write the file); nothing was "
        f"deleted. To store runs, make it writable (chmod u+w {history_path()}, and its folder) or set "
        "TFLAUNCH_DATA_DIR to a writable folder.\n")
    with locked(history_path()):
        assert history_cli(capsys, "list")[0] == 0, "readers do not wait"
        code, _, err = history_cli(capsys, "delete", str(runs["ok"]), "--yes")
    assert code == 1 and err == (
        f"tflaunch: the run history {history_path()} could not be written (database is locked by another process "
        "for more than 0.3 s); nothing was deleted. Let the other tflaunch finish, or close the program that holds "
        "it, then try again.\n")
    assert runs["ok"] in remaining()


def test_ctrl_c_at_a_question_ends_with_tflaunch_s_line_not_a_traceback(runs):
    """The top-level catch: Ctrl+C while `history delete` asks y/N on a terminal (a pty)
    ends with 130 and tflaunch's own last line; nothing is deleted."""
    import pty
    import signal
    import subprocess
    import time

    from .builders import TFLAUNCH

    leader, follower = pty.openpty()
    cli = subprocess.Popen([*TFLAUNCH, "history", "delete", str(runs["ok"])], stdin=follower,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=_as_from_a_terminal)
    os.close(follower)
    try:
        deadline = time.monotonic() + 60  # input() writes its question to stdout, a pipe here
        asked = b""
        while b"[y/N]" not in asked and time.monotonic() < deadline:
            asked += os.read(cli.stdout.fileno(), 1024) if _readable(cli.stdout.fileno()) else b""  # type: ignore[union-attr]
        _waiting_for_input(cli.pid)
        cli.send_signal(signal.SIGINT)
        _out, err = cli.communicate(timeout=30)
    finally:
        cli.kill()
        os.close(leader)
    assert b"[y/N]" in asked, "it never asked"
    assert cli.returncode == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == "tflaunch: history interrupted (Ctrl+C); nothing further was started."
    assert runs["ok"] in [run.id for run in History(history_path()).list_runs()]


def _waiting_for_input(pid: int) -> None:
    """Until the process sleeps in its read, as it is when a person presses Ctrl+C. A signal
    sent the instant the question appears can land between the prompt and the read, where
    CPython has no bytecode left to run its handler before it blocks (a race in input(), not
    in tflaunch: the process then waits for a line; it hung so under load)."""
    import time

    import psutil

    deadline, asleep = time.monotonic() + 10, 0
    while asleep < 3 and time.monotonic() < deadline:
        asleep = asleep + 1 if psutil.Process(pid).status() == psutil.STATUS_SLEEPING else 0
        time.sleep(0.05)


def _as_from_a_terminal() -> None:
    """SIGINT as a shell leaves it to a command: handled by default and not blocked (a test
    worker can have inherited it ignored, or blocked by a thread library; the child would
    inherit either, and the Ctrl+C would never arrive: it hung so once in the full suite)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _readable(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0.2)[0])
