"""What a run read per phase and what its launcher did before time zero (a cold page cache)
are kept by the history and by a cluster trial's result file, and read back checked."""

from __future__ import annotations

import json
import sqlite3

from tflaunch.core.run.pack_facts import PackContents
from tflaunch.core.run.pack_hits import HIT, LOOKUP, PackHits
from tflaunch.core.run.record_json import record_dict
from tflaunch.core.run.session import ProbeSession
from tflaunch.core.run.storage.eviction import INSTALLATION, MODEL, Level, PageCacheReport
from tflaunch.core.run.trial_info import TrialInfo
from tflaunch.core.run.warm.warm_facts import WarmStart
from tflaunch.core.run.warm.warm_start import cold_line, server_line
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.store.run_rows import record_from_data, run_data

from .builders import finished_record

PAGE_CACHE = PageCacheReport("cold", [Level(MODEL, files=1, size=4096, before=4096, after=0)], notes=[])


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
    assert loaded.page_cache is None and loaded.launch_notes == [] and loaded.phases["load"].read_bytes is None
    assert loaded.time_to_ready is not None


def test_a_result_file_carries_the_same_facts():
    data = json.loads(json.dumps(run_data(_record(), "cluster", TrialInfo("baseline", False, 1))))
    record, trial = record_from_data(data)
    assert record.phases["load"].read_bytes == 412 << 20 and record.page_cache == PAGE_CACHE
    assert trial == TrialInfo("baseline", False, 1, 0)
    assert json.loads(data["run"]["trial"]) == {"candidate": "baseline", "warmup": False, "number": 1, "instance": 0}
    del data["run"]["launch"]  # a result written by a tflaunch that did not keep them
    assert record_from_data(data)[0].page_cache is None


def test_a_warm_start_is_stored_as_before_and_an_old_row_reads_back_leniently(tmp_path):
    """The session builds a WarmStart from the warm client's lines; the history keeps the dict it
    always kept, and an older or damaged row (a key missing, a junk value) still loads."""
    session = ProbeSession(LaunchConfig(program=("python", "train.py")), warm=True)
    session.stderr(f"{server_line({'import_s': 3.5})}\n{cold_line('no fork here')}\n".encode())
    record = _record()
    record.warm_start = session.record.warm_start
    assert record.warm_start == WarmStart("no fork here", server_started=True, server_import_s=3.5)
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(record, "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        launch = json.loads(db.execute("SELECT launch FROM runs WHERE id=?", (run_id,)).fetchone()[0])
    assert json.dumps(launch["warm_start"]) == \
        '{"asked": true, "server_import_s": 3.5, "cold_because": "no fork here"}'
    assert record_dict(record)["warm_start"] == {"started": None, "cold_because": "no fork here",
                                                 "server_started": True, "server_import_s": 3.5}
    assert History(tmp_path / "h.sqlite3").load(run_id).warm_start == record.warm_start
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:  # an older row: no reason, a junk figure
        db.execute("UPDATE runs SET launch=? WHERE id=?",
                   ('{"warm_start": {"asked": true, "server_import_s": "junk", "cold_because": 7}}', run_id))
    old = History(tmp_path / "h.sqlite3").load(run_id)
    assert old.warm_start == WarmStart(server_started=True) and old.to_dict()["warm_start"]["server_import_s"] is None
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:  # not asked: no warm start at all, as {} was
        db.execute("UPDATE runs SET launch='{\"warm_start\": {\"asked\": 1}}' WHERE id=?", (run_id,))
    assert History(tmp_path / "h.sqlite3").load(run_id).warm_start is None
    assert _record().warm_start is None and record_dict(_record())["warm_start"] is None


def test_a_page_cache_report_is_stored_as_before_and_an_old_row_reads_back_leniently(tmp_path):
    """The record keeps eviction's PageCacheReport itself; the history and the JSON keep its dict, as
    before, and an older or damaged row (a key missing, a junk figure) still loads as a report."""
    record = _record()
    record.page_cache = PageCacheReport("preloaded", [Level(MODEL, 2, 8192, 4096, 8192, unreadable=["/m: denied"]),
                                                      Level(INSTALLATION, 900, 1 << 30, 1 << 29, 0, 1)],
                                        notes=["kept: mapped"], preloaded=8192, preload_seconds=0.25)
    stored = ('{"state": "preloaded", "model": {"files": 2, "bytes": 8192, "resident_before": 4096, '
              '"resident_after": 8192, "vanished": 0, "unreadable": ["/m: denied"]}, "tensorflow": {"files": 900, '
              '"bytes": 1073741824, "resident_before": 536870912, "resident_after": 0, "vanished": 1, '
              '"unreadable": []}, "preloaded": 8192, "preload_seconds": 0.25, "notes": ["kept: mapped"]}')
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(record, "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        launch = json.loads(db.execute("SELECT launch FROM runs WHERE id=?", (run_id,)).fetchone()[0])
    assert json.dumps(launch["page_cache"]) == stored
    assert json.dumps(record_dict(record)["page_cache"]) == stored
    loaded = History(tmp_path / "h.sqlite3").load(run_id)
    assert loaded.page_cache == record.page_cache and json.dumps(record_dict(loaded)["page_cache"]) == stored
    old = {"state": "cold", "model": {"files": 1, "bytes": 4096, "resident_before": 4096, "resident_after": "lots"},
           "preloaded": True, "notes": ["why", 3]}  # no TensorFlow, no preload_seconds, junk figures
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        db.execute("UPDATE runs SET launch=? WHERE id=?", (json.dumps({"page_cache": old}), run_id))
    assert History(tmp_path / "h.sqlite3").load(run_id).page_cache == \
        PageCacheReport("cold", [Level(MODEL, files=1, size=4096, before=4096)], notes=["why"])
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:  # no setting's name: no report, as {} was
        db.execute("UPDATE runs SET launch='{\"page_cache\": {\"model\": {}}}' WHERE id=?", (run_id,))
    assert History(tmp_path / "h.sqlite3").load(run_id).page_cache is None
    assert finished_record().page_cache is None and record_dict(finished_record())["page_cache"] is None


def test_a_cache_pack_s_facts_are_typed_stored_as_the_run_said_them_and_an_old_row_reads_back(tmp_path):
    """The record reads what its pack held and gave as typed facts; the history and the JSON keep
    the description PackHits made, and a row with junk figures (another program wrote it) loads,
    each junk figure none, and is written back as it was read."""
    hits = PackHits("/packs/0123456789abcdef", before={"entries": 1, "bytes": 4096},
                    after={"entries": 2, "bytes": 8192})
    for line in (f"I0 device_executable_persistor.h:1] {LOOKUP} a", f"I0 device_executable_persistor.h:1] {HIT} a",
                 f"I0 device_executable_persistor.h:1] {LOOKUP} b"):
        hits.feed(line)
    record = _record()
    record.cache_pack = hits.facts()
    pack = record.cache_pack
    assert (pack.folder, pack.read_only, pack.before, pack.after, pack.hits, pack.misses, len(pack.lines)) == \
        ("/packs/0123456789abcdef", False, PackContents(1, 4096), PackContents(2, 8192), 1, 1, 3)
    said = ('{"folder": "/packs/0123456789abcdef", "read_only": false, "before": {"entries": 1, "bytes": 4096}, '
            '"after": {"entries": 2, "bytes": 8192}, "hits": 1, "misses": 1, "lines": [')
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(record, "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        launch = db.execute("SELECT launch FROM runs WHERE id=?", (run_id,)).fetchone()[0]
    assert json.dumps(json.loads(launch)["cache_pack"]).startswith(said)
    assert json.dumps(record_dict(record)["cache_pack"]) == json.dumps(json.loads(launch)["cache_pack"])
    assert History(tmp_path / "h.sqlite3").load(run_id).cache_pack == pack
    junk = {"folder": "/packs/0123456789abcdef", "before": {"entries": "2"}, "after": [], "hits": -1, "misses": True,
            "lines": "x", "later": {"a": 1}}
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:  # an older or foreign row
        db.execute("UPDATE runs SET launch=? WHERE id=?", (json.dumps({"cache_pack": junk}), run_id))
    old = History(tmp_path / "h.sqlite3").load(run_id)
    assert old.cache_pack is not None
    assert (old.cache_pack.before, old.cache_pack.after, old.cache_pack.hits, old.cache_pack.misses,
            old.cache_pack.lines) == (PackContents(), PackContents(), None, None, ())
    assert any(n.startswith("Cache pack: held 0 XLA programs before the run and 0 after; 0 compiled and added; hits "
                            "are not known") for n in old.notes), old.notes
    assert record_dict(old)["cache_pack"] == junk
    again = history.record(old, "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        assert db.execute("SELECT launch FROM runs WHERE id=?", (again,)).fetchone()[0] == \
            json.dumps({"cache_pack": junk}), "written back byte for byte"
    assert _record().cache_pack is None and record_dict(_record())["cache_pack"] is None
