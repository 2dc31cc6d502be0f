"""What a run read per phase and what its launcher did before time zero (a cold page cache)
are kept by the history and by a cluster trial's result file, and read back checked."""

from __future__ import annotations

import json
import sqlite3

from tflaunch.core.store.history import History
from tflaunch.core.store.run_rows import record_from_data, run_data

from .builders import finished_record

PAGE_CACHE = {"state": "cold", "model": {"files": 1, "bytes": 4096, "resident_before": 4096, "resident_after": 0},
              "notes": []}


def _record():
    record = finished_record()
    record.phases["load"].read_bytes, record.phases["load"].rchar = 412 << 20, 500 << 20
    record.page_cache = PAGE_CACHE
    record.launch_notes = ["Page cache cold: evicted before the start: model 4.0 KiB → 0 B in memory."]
    return record


def test_reads_and_launch_facts_round_trip_through_the_history(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(_record(), "cli")
    loaded = History(tmp_path / "h.sqlite3").load(run_id)
    assert (loaded.phases["load"].read_bytes, loaded.phases["load"].rchar) == (412 << 20, 500 << 20)
    assert loaded.phases["import"].read_bytes is None
    assert loaded.page_cache == PAGE_CACHE and loaded.launch_notes == _record().launch_notes


def test_damaged_launch_facts_lose_themselves_not_the_run(tmp_path):
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(_record(), "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        db.execute("UPDATE runs SET launch='[not json' WHERE id=?", (run_id,))
        db.execute("UPDATE phases SET extra='{\"read_bytes\": -5, \"rchar\": true}' WHERE run_id=?", (run_id,))
    loaded = History(tmp_path / "h.sqlite3").load(run_id)
    assert loaded.page_cache == {} and loaded.launch_notes == [] and loaded.phases["load"].read_bytes is None
    assert loaded.time_to_ready is not None


def test_a_result_file_carries_the_same_facts():
    data = json.loads(json.dumps(run_data(_record(), "cluster", {"candidate": "baseline", "warmup": False,
                                                                  "number": 1, "instance": 0})))
    record, trial = record_from_data(data)
    assert record.phases["load"].read_bytes == 412 << 20 and record.page_cache == PAGE_CACHE
    assert trial == {"candidate": "baseline", "warmup": False, "number": 1, "instance": 0}
    del data["run"]["launch"]  # a result written by a tflaunch that did not keep them
    assert record_from_data(data)[0].page_cache == {}
