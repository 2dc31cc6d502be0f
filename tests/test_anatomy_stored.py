"""A run's anatomy as the history and the JSON keep it: a typed value (run/anatomy.py), read
back from every shape a row holds, older and damaged ones included, and written out byte for
byte as before the anatomy was typed (the texts below are what that code wrote)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tflaunch.core.report.review import run_review
from tflaunch.core.report.table import run_table
from tflaunch.core.report.trace_export import trace_json
from tflaunch.core.run import events as ev
from tflaunch.core.run.anatomy import Anatomy, AnatomyPart, EventTime, checked_anatomy
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.words import notes
from tflaunch.core.store.history import History
from tflaunch.core.store.run_rows import record_from_data, run_data

from .builders import finished_record

NAMES = [{"name": "__inference_train_function_812", "seconds": 0.41}, {"name": "EagerKernelExecute", "seconds": 0.02}]
TODAY = {"window": 1.25, "phase": "first", "thread": "MainThread",
         "parts": [{"part": "tracing", "seconds": 0.5, "names": NAMES}, {"part": "execution", "seconds": 0.25,
                                                                          "names": []}],
         "not_attributed": 0.5, "unattributed_names": NAMES[1:], "trace_bytes": 123456}
TODAY_TEXT = ('{"window": 1.25, "phase": "first", "thread": "MainThread", "parts": [{"part": "tracing", '
              '"seconds": 0.5, "names": [{"name": "__inference_train_function_812", "seconds": 0.41}, {"name": '
              '"EagerKernelExecute", "seconds": 0.02}]}, {"part": "execution", "seconds": 0.25, "names": []}], '
              '"not_attributed": 0.5, '
              '"unattributed_names": [{"name": "EagerKernelExecute", "seconds": 0.02}], "trace_bytes": 123456}')
# (what the row holds, what the history writes back, the typed value read from it)
STORED = {
    "today": (json.dumps(TODAY), TODAY_TEXT, Anatomy(
        1.25, "first", thread="MainThread",
        parts=(AnatomyPart("tracing", 0.5, (EventTime("__inference_train_function_812", 0.41),
                                            EventTime("EagerKernelExecute", 0.02))), AnatomyPart("execution", 0.25)),
        not_attributed=0.5, unattributed_names=(EventTime("EagerKernelExecute", 0.02),), trace_bytes=123456)),
    "failed": ('{"window": 0.5, "phase": "first", "error": "the profiler wrote no trace"}',
               '{"window": 0.5, "phase": "first", "error": "the profiler wrote no trace"}',
               Anatomy(0.5, "first", error="the profiler wrote no trace")),
    # The first rows: no names, thread or trace size; whole seconds as integers.
    "oldest": ('{"window": 2, "phase": "first", "parts": [{"part": "xla", "seconds": 1}], "not_attributed": 1}',
               '{"window": 2.0, "phase": "first", "parts": [{"part": "xla", "seconds": 1.0, "names": []}], '
               '"not_attributed": 1.0, "unattributed_names": []}',
               Anatomy(2.0, "first", parts=(AnatomyPart("xla", 1.0),), not_attributed=1.0)),
    # What no tflaunch wrote: keys nobody reads, texts and figures of other types, a newer probe's part.
    "junk": ('{"extra": [1, 2], "window": 1.0, "phase": 7, "thread": null, "run_id": true, "parts": [{"part": '
             '"gpu_future", "seconds": 0.25, "what": "x", "names": ["MatMul", {"name": 5, "seconds": 0.1}, '
             '{"seconds": 0.05}]}], "not_attributed": 0.75, "trace_bytes": "many"}',
             '{"window": 1.0, "parts": [{"part": "gpu_future", "seconds": 0.25, "names": [{"name": "5", "seconds": '
             '0.1}, {"name": "", "seconds": 0.05}]}], "not_attributed": 0.75, "unattributed_names": []}',
             Anatomy(1.0, parts=(AnatomyPart("gpu_future", 0.25, (EventTime("5", 0.1), EventTime("", 0.05))),),
                     not_attributed=0.75)),
    # An anatomy that names its run (the JSON's form; the child never sends one): kept where it was.
    "named": ('{"window": 1.0, "phase": "first", "run_id": 3, "parts": [], "not_attributed": 1.0}',
              '{"window": 1.0, "phase": "first", "run_id": 3, "parts": [], "not_attributed": 1.0, '
              '"unattributed_names": []}',
              Anatomy(1.0, "first", not_attributed=1.0, run_id=3)),
}
# Rows that lose their anatomy, not the run: not an object, no window, a part without a name.
LOST = ["[]", "null", '{"window": "x"}', '{"window": 1.0, "parts": [{"part": "Bad Name", "seconds": 0.1}]}']


def _stored_as(tmp_path: Path, text: str) -> RunRecord:
    """A finished run whose history row's anatomy column holds `text`, read back."""
    history = History(tmp_path / "runs.sqlite3")
    run_id = history.record(finished_record(), "cli")
    with sqlite3.connect(tmp_path / "runs.sqlite3") as db:
        db.execute("UPDATE runs SET anatomy=? WHERE id=?", (text, run_id))
    return History(tmp_path / "runs.sqlite3").load(run_id)


def _written_back(tmp_path: Path, record: RunRecord) -> str:
    again = History(tmp_path / "again.sqlite3")
    run_id = again.record(record, "cli")
    with sqlite3.connect(tmp_path / "again.sqlite3") as db:
        return str(db.execute("SELECT anatomy FROM runs WHERE id=?", (run_id,)).fetchone()[0])


@pytest.mark.parametrize("shape", list(STORED))
def test_every_stored_shape_reads_typed_and_is_written_back_as_before(tmp_path: Path, shape: str) -> None:
    row, written, typed = STORED[shape]
    record = _stored_as(tmp_path, row)
    assert record.anatomy == typed
    assert _written_back(tmp_path, record) == written
    trial_file = json.loads(json.dumps(run_data(record, "cli", None)))  # a cluster trial's result, as written
    assert record_from_data(trial_file)[0].anatomy == typed
    # The JSON adds the run's id, last. A row's own id (the named row, which tflaunch never
    # wrote) goes there too, no longer where the row had it.
    stored = {key: value for key, value in json.loads(written).items() if key != "run_id"}
    assert json.dumps(record.to_dict()["anatomy"]) == json.dumps({**stored, "run_id": 1})
    # Every view reads it: the words, the run's table, its review image and its trace.
    assert "Anatomy of " in run_table(record)
    assert any(fact == "Anatomy" for fact, _ in run_review(record).facts)
    notes(record), trace_json([(1, record)])


@pytest.mark.parametrize("row", LOST)
def test_a_damaged_anatomy_is_lost_not_the_run(tmp_path: Path, row: str) -> None:
    record = _stored_as(tmp_path, row)
    assert record.anatomy is None and record.time_to_ready is not None
    assert _written_back(tmp_path, record) == "{}"
    assert record.to_dict()["anatomy"] is None and not record.kind.anatomy


def test_the_event_s_anatomy_is_stored_and_given_as_before(tmp_path: Path) -> None:
    record = finished_record()
    fields = {key: value for key, value in TODAY.items() if key != "phase"}  # the line's phase is the anatomy's
    event = ev.EventParser().parse(ev.encode("anatomy", "first", 1000.5, **fields))
    assert isinstance(event, ev.AnatomyMeasured) and event.anatomy == STORED["today"][2]
    record.apply(event)
    assert record.anatomy == STORED["today"][2] and record.kind.anatomy
    assert _written_back(tmp_path, record) == TODAY_TEXT
    assert json.dumps(record.to_dict()["anatomy"]) == f'{TODAY_TEXT[:-1]}, "run_id": null}}'


def test_checked_anatomy_gives_back_what_it_read() -> None:
    for row, written, typed in STORED.values():
        assert checked_anatomy(json.loads(row)).to_dict() == json.loads(written)
        assert checked_anatomy(typed.to_dict()) == typed
