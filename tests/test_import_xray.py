"""The import X-ray: measured in a real probe run, stored, checked where it enters, and
turned into advice (missing .pyc files, both Kerases, a cold page cache, oneDNN)."""

from __future__ import annotations

import compileall
import json
import os
import re
import sqlite3
import sys

import pytest

from tflaunch.core.probe.import_xray import ImportXray, group_of
from tflaunch.core.report.imports import (
    COLD_READ_BYTES,
    import_flags,
    import_line,
    import_notes,
    import_table,
    top_by_cumulative,
    top_by_self,
)
from tflaunch.core.run import events as ev
from tflaunch.core.run.record_json import record_dict
from tflaunch.core.store.history import History

from .builders import finished_record, tflaunch

XRAY = {
    "method": "find_and_load", "total": 2.0, "modules": 3000, "native": 0.5, "native_share": 0.25,
    "groups": [{"name": "tensorflow", "self": 0.01, "cumulative": 2.0, "modules": 2},
               {"name": "tensorflow.python.ops", "self": 0.6, "cumulative": 0.9, "modules": 280},
               {"name": "keras.src.layers", "self": 0.05, "cumulative": 0.06, "modules": 160}],
    "packages": [{"name": "tensorflow", "self": 1.6, "modules": 1600},
                 {"name": "keras", "self": 0.3, "modules": 500}],
    "compiled": {"tensorflow": {"modules": 1600, "checked": 200, "written": 0, "uncached": 0,
                                "folder": "/site/tensorflow"}},
    "read_bytes": 0, "onednn": "0", "keras": {"keras": "3.15.1", "tf_keras": None},
}
FACTS = ev.checked_imports(XRAY)


# -- one real run: probe -> event -> record -> history -> `history show` and the CLI table --
@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    data = tmp_path_factory.mktemp("xray-data")
    env = {**os.environ, "TFLAUNCH_DATA_DIR": str(data), "TFLAUNCH_CONFIG_DIR": str(data / "config")}
    bench = tflaunch("bench", "--model", "sample:mlp", "--steady", "1", "--imports", env=env)
    assert bench.returncode == 0, bench.stderr
    shown = tflaunch("history", "show", "1", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    return bench.stdout, json.loads(shown.stdout)


@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_real_run_records_its_import_xray(real_run):
    _, stored = real_run
    imports, import_phase = ev.checked_imports(stored["imports"]), stored["phases"]["import"]["duration"]
    assert imports.total == pytest.approx(import_phase, rel=0.2)
    assert 0.0 <= imports.native_share <= 1.0 and imports.native > 0  # TensorFlow's .so files
    assert imports.packages[0].name == "tensorflow"
    assert any(g.name.startswith("tensorflow.python.") for g in top_by_self(imports, 5))
    assert (imports.compiled_of("tensorflow") or pytest.fail("no tensorflow")).checked > 0


def test_bench_imports_prints_the_breakdown_after_the_phase_table(real_run):
    out, _ = real_run
    line = re.search(r"^Import [\d.]+ m?s, own code: tensorflow .*native libraries \d+ %", out, re.MULTILINE)
    assert line and out.index("Time to ready:") < line.start() < out.index("Module (cumulative)")
    assert "tensorflow.python." in out and "native libraries" in out and " ms" in out


# -- the probe side, on tiny packages built here ------------------------------------------
def _package(root, name):
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import a, b\n")
    (pkg / "a.py").write_text("import json\nVALUE = 1\n")
    (pkg / "b.py").write_text("from . import a\nVALUE = a.VALUE + 1\n")
    return pkg


def _xray(root, name, monkeypatch, write_bytecode):
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(sys, "dont_write_bytecode", not write_bytecode)
    try:
        with ImportXray(packages=(name,)) as xray:
            __import__(name)
        return xray.report()
    finally:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def test_a_package_without_pyc_files_is_flagged(tmp_path, monkeypatch):
    _package(tmp_path, "xray_nopyc")
    report = _xray(tmp_path, "xray_nopyc", monkeypatch, write_bytecode=False)
    assert report["compiled"]["xray_nopyc"] == {"modules": 3, "checked": 3, "written": 0, "uncached": 3,
                                                "folder": str(tmp_path / "xray_nopyc")}
    [flag] = import_flags(ev.checked_imports(report), "/env/bin/python")
    assert "xray_nopyc's .pyc files are missing (100 % of 3" in flag
    assert f"`/env/bin/python -m compileall -q {tmp_path / 'xray_nopyc'}`" in flag


def test_a_compiled_package_is_not_flagged(tmp_path, monkeypatch):
    compileall.compile_dir(str(_package(tmp_path, "xray_pyc")), quiet=1)
    report = _xray(tmp_path, "xray_pyc", monkeypatch, write_bytecode=False)
    assert report["compiled"]["xray_pyc"]["uncached"] == 0 and report["compiled"]["xray_pyc"]["written"] == 0
    assert import_flags(ev.checked_imports(report)) == []


def test_pyc_files_written_by_this_import_say_later_runs_are_faster(tmp_path, monkeypatch):
    _package(tmp_path, "xray_first")
    report = _xray(tmp_path, "xray_first", monkeypatch, write_bytecode=True)
    assert report["compiled"]["xray_first"]["written"] == 3
    [flag] = import_flags(ev.checked_imports(report))
    assert "this run compiled and saved them" in flag and "later runs will be faster" in flag


def test_nesting_gives_self_and_cumulative_per_group(tmp_path, monkeypatch):
    _package(tmp_path, "xray_nest")
    report = _xray(tmp_path, "xray_nest", monkeypatch, write_bytecode=False)
    [group] = [g for g in report["groups"] if g["name"] == "xray_nest"]
    assert group["modules"] == 3 and 0 < group["self"] <= group["cumulative"] <= report["total"]
    assert report["total"] > 0 and report["method"] == "find_and_load"
    assert group_of("tensorflow.python.framework.ops") == "tensorflow.python.framework"
    assert group_of("keras.src.layers.core.dense") == "keras.src.layers" and group_of("numpy.core") == "numpy"


# -- the event: checked where it enters -------------------------------------------------
def _line(**fields):
    return ev.encode("imports", "import", 1000.0, **{**XRAY, **fields})


@pytest.mark.parametrize("fields", [
    {"total": float("nan")}, {"total": -1.0}, {"total": "2 s"}, {"native_share": 1.5},
    {"groups": "tensorflow"}, {"groups": [{"name": "x", "self": 1e300, "cumulative": 1.0, "modules": 1}]},
    {"modules": True}, {"read_bytes": -5}, {"compiled": [1, 2]}, {"keras": {"keras": 3}},
])
def test_malformed_imports_events_are_skipped_and_counted(fields):
    parser = ev.EventParser()
    assert parser.parse(_line(**fields)) is None
    assert parser.malformed == 1


def test_an_imports_event_is_capped_and_unknown_keys_dropped():
    groups = [{"name": "m" * 5000, "self": 0.1, "cumulative": 0.2, "modules": 1, "extra": 1}] * 500
    event = ev.EventParser().parse(_line(groups=groups, surprise={"a": 1}))
    assert isinstance(event, ev.ImportsMeasured)
    assert len(event.imports.groups) == ev.MAX_IMPORT_ROWS and len(event.imports.groups[0].name) == 200
    kept = event.imports.to_dict()
    assert "surprise" not in kept and "extra" not in kept["groups"][0]


# -- history ----------------------------------------------------------------------------
def _with_xray():
    record = finished_record()
    record.apply(ev.ImportsMeasured(1000.5, "import", FACTS))
    return record


def test_the_xray_round_trips_through_the_history(tmp_path):
    """Typed in the record; stored and written as JSON as the checked dict was, byte for byte
    (XRAY is that dict, in its order), and a row from an older probe (fewer keys) reads back."""
    history = History(tmp_path / "h.sqlite3")
    record = _with_xray()
    run_id = history.record(record, "cli")
    assert history.load(run_id).imports == FACTS and FACTS.compiled_of("tensorflow").folder == "/site/tensorflow"
    assert history.load(history.record(finished_record(), "cli")).imports is None
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        assert db.execute("SELECT imports FROM runs WHERE id=?", (run_id,)).fetchone()[0] == json.dumps(XRAY)
        older = {k: XRAY[k] for k in ("total", "modules", "native", "native_share", "groups", "packages")}
        db.execute("UPDATE runs SET imports=? WHERE id=?", (json.dumps(older), run_id))
    assert json.dumps(record.to_dict()["imports"]) == json.dumps(XRAY)
    assert json.dumps(record_dict(finished_record())["imports"]) == "{}"
    old = History(tmp_path / "h.sqlite3").load(run_id).imports
    assert old is not None and (old.method, old.compiled, old.read_bytes, old.keras) == (None, (), None, None)
    assert old.to_dict() == {**older, "method": None, "compiled": {}, "read_bytes": None, "onednn": None,
                             "keras": {"keras": None, "tf_keras": None}}


@pytest.mark.parametrize("stored", ["not json", '{"total": -1}', "[1]", '{"total": NaN}'])
def test_a_damaged_imports_column_loses_the_xray_not_the_run(tmp_path, stored):
    history = History(tmp_path / "h.sqlite3")
    run_id = history.record(_with_xray(), "cli")
    history.close()
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        db.execute("UPDATE runs SET imports=? WHERE id=?", (stored, run_id))
    db.close()
    loaded = History(tmp_path / "h.sqlite3").load(run_id)
    assert loaded.imports is None and loaded.time_to_ready == pytest.approx(1.02)


# -- advice and text --------------------------------------------------------------------
def test_known_causes_are_flagged_with_what_to_do():
    both = {**XRAY, "keras": {"keras": "3.15.1", "tf_keras": "2.21.0"}, "read_bytes": COLD_READ_BYTES + 1,
            "onednn": None}
    flags = import_flags(ev.checked_imports(both))
    assert any("Keras 2 (tf_keras 2.21.0) and Keras 3 (keras 3.15.1) were both imported" in f for f in flags)
    assert any("50.0 MiB were read from storage during the import (" in f and "page_cache=cold" in f
               and "later runs will be faster" in f for f in flags)
    assert import_flags(FACTS) == [] and import_notes(FACTS) == []
    assert "TF_ENABLE_ONEDNN_OPTS=0" in import_notes(ev.checked_imports(both))[0]


def test_the_xray_in_words():
    assert import_line(FACTS) == ("Import 2.00 s, own code: tensorflow 1.60 s, keras 300 ms, others 100 ms; "
                                 "native libraries 25 %")  # the parts add up to the total
    assert [g.name for g in top_by_cumulative(FACTS, 2)] == ["tensorflow", "tensorflow.python.ops"]
    table = import_table(FACTS)
    assert "tensorflow.python.ops" in table and "900 ms" in table and "45 %" in table
    assert "not recorded" in import_table(None)


def test_the_import_phase_and_the_xray_total_are_reconciled_in_words():
    from tflaunch.core.report.imports import phase_gap_line

    assert phase_gap_line(FACTS, 2.01) == ""  # the same within noise: one figure, said once
    gap = phase_gap_line(FACTS, 2.4)
    assert gap.startswith("Import phase 2.40 s, of which module imports 2.00 s: the other 400 ms")
    assert gap in import_table(FACTS, phase=2.4) and "whole import" in import_table(FACTS)
