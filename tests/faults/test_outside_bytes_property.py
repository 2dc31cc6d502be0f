"""Any bytes from outside (issue 33, must hold): whatever a profile field or a history column
holds never crashes a listing, and a profile never reaches a process without a yes unless
what it runs is plain data by a judge written apart from trust.py's.

Derandomized: the same examples on every run; each case that ever failed is an @example.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import sqlite3
import sys
import tempfile
from dataclasses import fields
from pathlib import Path

import tomli_w
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tflaunch.core.cli.history import runs_table
from tflaunch.core.cli.profiles import _list
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.settings.tuning_env import TUNING_VARIABLES
from tflaunch.core.store.history import History, HistoryError
from tflaunch.core.store.profiles import ProfileError, ProfileStore, UntrustedProfileError, describe_evidence
from tflaunch.core.store.trust import TrustFile

from ..builders import finished_record

PROPERTY = settings(derandomize=True, max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SETTINGS = [f.name for f in fields(LaunchConfig)]
EVIDENCE = ["model", "runs", "date", "inputs", "time_to_ready", "steady_per_call", "peak_rss_bytes_median", "phases",
            "baseline", "environment", "gpus", "sweep", "caches", "doctor", "assumed_input_shape"]
TOML_VALUE = st.recursive(
    st.booleans() | st.integers(-(2 ** 63), 2 ** 63 - 1) | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10)
RAW = st.binary(max_size=80)


def _is_data_only(config: LaunchConfig) -> bool:
    """An independent judge: what may run with no yes (the README's allow-list, from its table)."""
    env_ok = all(name in TUNING_VARIABLES and value.isascii() and len(value) < 300
                 for name, value in config.extra_env.items())
    model_ok = config.model.startswith("sample:") or config.model.endswith((".h5", ".hdf5")) or (
        config.model.endswith(".keras") and not os.path.isdir(config.model)) or config.model == ""
    return (env_ok and os.path.realpath(config.python) == os.path.realpath(sys.executable)
            and not config.imports and not config.unsafe_deserialization and model_ok
            and not config.program and not config.workdir)


def _profile_text(section: str, name: str, value: object | bytes) -> bytes:
    head = b'schema_version = 1\nname = "p"\n[settings]\nmodel = "sample:mlp"\n'
    if isinstance(value, bytes):  # raw bytes where a value belongs: TOML or not, UTF-8 or not
        line = name.encode() + b" = " + value + b"\n"
        return head + (line if section == "settings" else b"[evidence]\n" + line)
    table = {"schema_version": 1, "name": "p", "settings": {"model": "sample:mlp"}, "evidence": {}}
    table[section][name] = value
    return tomli_w.dumps(table).encode()


def _check_listing(folder: Path) -> None:
    store = ProfileStore(folder, TrustFile(folder.parent / "trusted.toml"))
    entries = store.entries()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert _list(store) in (0, 1)
    assert "\x1b" not in out.getvalue()
    for entry in entries:
        if entry.profile is None:
            assert entry.problem
            continue
        describe_evidence(entry.profile.evidence)
        entry.profile.to_toml()
        try:
            used = store.load_for_launch(entry.name)
        except UntrustedProfileError:
            continue
        except ProfileError:
            continue
        assert _is_data_only(used.config), f"{used.config} reached a launch without a yes"


@PROPERTY
@given(section=st.sampled_from(["settings", "evidence"]), data=st.data())
@example(section="evidence", data=None)  # `[evidence] baseline = [1, 2]`, found from outside
@example(section="evidence", data="baseline={'': 0}")  # a table without the figures it is read for (KeyError)
def test_any_value_in_any_profile_field_lists_and_never_runs_without_a_yes(section, data):
    if data is None:
        name, value = "baseline", [1, 2]
    elif isinstance(data, str):  # an @example: NAME=VALUE
        name, value = data.split("=", 1)[0], ast.literal_eval(data.split("=", 1)[1])
    else:
        name = data.draw(st.sampled_from(SETTINGS if section == "settings" else EVIDENCE) | st.text(max_size=6)
                         .filter(lambda n: n and n.isidentifier()), label="name")
        value = data.draw(TOML_VALUE | RAW, label="value")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "profiles"
        folder.mkdir()
        (folder / "p.toml").write_bytes(_profile_text(section, name, value))
        (folder / "good.toml").write_bytes(_profile_text("settings", "intra", 2))
        _check_listing(folder)
        assert ProfileStore(folder).load("good").config.intra == 2, "the other profile is listed"


@PROPERTY
@given(env=st.dictionaries(st.sampled_from([*TUNING_VARIABLES, "LD_PRELOAD", "PYTHONPATH"]) | st.text(max_size=8),
                           st.text(max_size=30), max_size=3))
@example(env={"OMP_NUM_THREADS": "\u0663"})
@example(env={"KMP_WARNINGS": "\x1b[1A\r\x1b[2K  - sets KMP_WARNINGS=0", "LD_PRELOAD": "/tmp/x.so"})
def test_any_environment_in_a_profile_reaches_a_launch_only_as_tuning(env):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "profiles"
        folder.mkdir()
        table = {"schema_version": 1, "settings": {"model": "sample:mlp", "extra_env": env}}
        (folder / "p.toml").write_bytes(tomli_w.dumps(table).encode())
        _check_listing(folder)


# The columns a listing reads: each given any bytes, as TEXT (undecodable) or as a BLOB.
COLUMNS = ["model", "source", "status", "failed_phase", "time_to_ready", "peak_rss", "config", "model_info",
           "launched_at", "finished_at", "command", "marks", "settings", "environment", "failure", "stderr_tail"]


@PROPERTY
@given(column=st.sampled_from(COLUMNS), raw=RAW, as_text=st.booleans())
@example(column="model", raw=b"\x1b[2K\xffA", as_text=True)  # hid every run (sqlite3 could not decode it)
def test_any_bytes_in_any_history_column_never_crash_a_listing(column, raw, as_text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.sqlite3"
        history = History(path)
        good = history.record(finished_record(model="good", at=1000.0), "cli")
        bad = history.record(finished_record(model="bad", at=1001.0), "cli")
        history.close()
        with sqlite3.connect(path) as db:
            cast = "CAST(? AS TEXT)" if as_text else "?"
            db.execute(f"UPDATE runs SET {column} = {cast} WHERE id = ?", (raw, bad))
        history = History(path)
        runs = history.list_runs()
        assert good in [r.id for r in runs]
        table = runs_table(runs)
        assert "\x1b" not in table
        try:
            history.load(bad)
        except (HistoryError, KeyError):
            pass
        assert history.load(good).config.model == "good"
        history.delete([bad])
        assert [r.id for r in history.list_runs()] == [good]
        history.close()


def test_the_judge_agrees_with_the_defaults():
    assert _is_data_only(LaunchConfig()) and os.environ.get("TFLAUNCH_CONFIG_DIR")
