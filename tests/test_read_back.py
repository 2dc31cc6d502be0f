"""The settings a child read back: kept as it said them, read by tflaunch as typed figures."""

from __future__ import annotations

import json
import sqlite3

from tflaunch.core.run import events as ev
from tflaunch.core.run.read_back import ReadBack
from tflaunch.core.store.history import History
from tflaunch.core.store.profiles import evidence_from_runs

from .builders import finished_record

SAID = ('{"intra_op_threads": 2, "gpus": "/physical_device:GPU:0", "cuda_cache": 7, '
        '"xla_flags": ["--tf_xla_persistent_cache_directory=/x"], "later": {"a": [1]}}')


def test_a_child_s_read_back_is_kept_as_it_came_and_its_junk_figures_read_as_none(tmp_path):
    record = finished_record()
    record.config = record.config.replace(cuda_cache="warm", xla_cache=True)
    record.apply(ev.EventParser().parse(ev.encode("settings", "devices", 1000.5, applied=json.loads(SAID))))
    applied = record.settings
    assert (applied.gpus, applied.cuda_cache, applied.xla_flags) == (None, None, None)
    assert record.part_label("contexts") == "contexts and allocators"  # no count of GPUs it never named
    assert evidence_from_runs([record]).get("caches") is None  # no folder the child never said it had
    assert json.dumps(record.to_dict()["settings"]) == SAID
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(record, "cli")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        assert db.execute("SELECT settings FROM runs WHERE id=?", (run_id,)).fetchone()[0] == SAID
    back = history.load(run_id).settings
    assert back == applied and json.dumps(back.to_dict()) == SAID


def test_what_tflaunch_reads_of_a_read_back():
    applied = ReadBack({"gpus": ["/physical_device:GPU:0", 3, "/physical_device:GPU:1"], "cuda_cache": "/c/cuda",
                        "xla_flags": "--tf_xla_persistent_cache_directory=/c/xla"})
    assert applied.gpus == ("/physical_device:GPU:0", "/physical_device:GPU:1")
    assert (applied.cuda_cache, applied.xla_flags) == ("/c/cuda", "--tf_xla_persistent_cache_directory=/c/xla")
    record = finished_record()
    record.settings = applied
    assert record.part_label("contexts").endswith("(2 GPUs, one call)")
    assert not ReadBack() and ReadBack().gpus is None


def test_a_child_s_figure_beyond_64_bits_is_none_and_its_run_reads_back(tmp_path):
    """A figure of exactly 2**63 passed the parser's check (abs > 2**63), was stored, and the
    history's 64-bit reading then refused the whole run as damaged."""
    record = finished_record()
    parser = ev.EventParser()
    record.apply(parser.parse(ev.encode("settings", "devices", 1000.5, applied={"intra_op_threads": 1 << 63})))
    record.apply(parser.parse(ev.encode("result", "load", 1000.6, environment={"cores": 1 << 63, "python": "3.11"},
                                        model={"params": -(1 << 63) - 1, "name": "m"})))
    assert record.settings.described == {"intra_op_threads": None} and record.environment.cores is None
    history = History(tmp_path / "h.sqlite3")
    back = history.load(history.record(record, "cli"))
    assert back.environment.python == "3.11" and back.model.name == "m" and back.model.params is None
