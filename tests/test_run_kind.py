"""The kind of a run as a value (core/run/run_kind.py): plain, anatomy (profiler on), warm
(and whether it paid the warm server's start), cold, a cluster trial, a doctor arm; derived
from what the record stores, and never pooled: an anatomy run joined a 6-run side of plain
runs (15.8 ms steady against 1.6 ms), and the launch that started the warm server (47 s)
joined the warm side, so Compare said "no clear difference" where the Advisor said warm
saves 17.7 s."""

from __future__ import annotations

from contextlib import closing

import pytest

from tflaunch.core.paths import history_path
from tflaunch.core.report.review import comparison_review
from tflaunch.core.report.sides import sides_of
from tflaunch.core.run.anatomy import checked_anatomy
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.run_kind import ANATOMY_NOTE, COLD, PLAIN, WARM, WARM_SERVER, RunKind
from tflaunch.core.run.trial_node import TrialNode
from tflaunch.core.run.warm.warm_facts import WarmStart
from tflaunch.core.run.words import COLD_MARK, WARM_MARK
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History

from .builders import finished_record
from .compare_builders import side

ANATOMY = checked_anatomy({"phase": "first", "window": 0.2, "parts": [{"part": "kernels", "seconds": 0.1}],
                           "not_attributed": 0.1})


def anatomy_run(ready_s: float, first_id: int, at: float = 2000.0, noted_only: bool = False) -> RunRecord:
    record = side([ready_s], first_id=first_id, at=at)[0]
    record.launch_notes.append(ANATOMY_NOTE)
    if not noted_only:
        record.anatomy = ANATOMY
    return record


def warm_runs(ready_s: list[float], first_id: int, at: float, server_first: bool = False) -> list[RunRecord]:
    """Program launches asked to start warm, started warm; the first paid the server's start."""
    runs = []
    for k, seconds in enumerate(ready_s):
        record = side([seconds], first_id=first_id + k, at=at + k)[0]
        record.config = LaunchConfig(program=("python", "train.py"), until="exit")
        record.warm_start = WarmStart()
        record.marks.append((WARM_MARK, 0.01))
        if server_first and k == 0:
            record.warm_start = WarmStart(server_started=True, server_import_s=40.0)
        runs.append(record)
    return runs


def test_the_kind_comes_from_what_the_record_stores():
    assert finished_record().kind == PLAIN and PLAIN.plain and PLAIN.words == "plain"
    assert anatomy_run(1.0, 1).kind == RunKind(anatomy=True)
    assert anatomy_run(1.0, 1, noted_only=True).kind.anatomy, "a profiled run that failed before its anatomy"
    first, second = warm_runs([47.0, 1.0], 1, 3000.0, server_first=True)
    assert (first.kind.start, second.kind.start) == (WARM_SERVER, WARM)
    assert "server's start" in first.kind.words and first.kind.short == "warm + server start"
    cold = finished_record()
    cold.warm_start, cold.marks = WarmStart(cold_because="-X"), [(COLD_MARK, 0.01)]
    assert cold.kind.start == COLD
    trial = finished_record()
    trial.node = TrialNode("cpu", "n1")
    assert trial.kind.origin == "cluster" and trial.kind.words == "cluster trial"
    arm = finished_record()
    arm.source = "doctor"
    assert arm.kind.words == "doctor arm" and not arm.kind.plain
    arm.warm_start, arm.marks = WarmStart(), [(WARM_MARK, 0.01)]
    assert arm.kind.short == "doctor, warm", "the parts combine"


def test_an_anatomy_run_is_a_side_of_its_own():
    plain = side([1.6, 1.61, 1.62, 1.63, 1.64])
    runs = [*plain, anatomy_run(15.8, 6)]
    sides = sides_of(runs)
    assert [s.n for s in sides] == [5, 1], "the profiled run is not pooled with the measured ones"
    review = comparison_review(runs)
    _, rows = review.table
    assert [row[:2] for row in rows] == [["A (baseline)", "5"], ["B (anatomy)", "1"]]  # each says what it is


def test_the_launch_that_started_the_warm_server_is_shown_apart():
    cold = [r for r in side([20.0, 20.2, 20.4, 20.6, 20.8], first_id=1, at=1000.0)]
    for record in cold:
        record.config = LaunchConfig(program=("python", "train.py"), until="exit")
    warm = warm_runs([47.0, 2.5, 2.6, 2.7, 2.8, 2.9], first_id=6, at=1000.5, server_first=True)
    runs = cold + warm
    sides = sides_of(runs)
    assert [(s.n, s.runs[0].kind.start) for s in sides] == [(5, None), (1, WARM_SERVER), (5, WARM)]
    review = comparison_review(runs)
    # Warm is faster than cold by far more than the noise: the verdict the Advisor gave.
    assert review.headline.startswith("Fastest to ready: C (warm)"), review.headline
    assert [row[:2] for row in review.table[1]] == [["A (baseline)", "5"], ["B (warm + server start)", "1"],
                                                    ["C (warm)", "5"]]


def test_doctor_arms_and_cluster_trials_are_not_pooled_with_plain_runs():
    plain = side([1.0, 1.01, 1.02])
    arms = side([1.0, 1.01, 1.02], first_id=4)
    for record in arms:
        record.source = "doctor"
    trials = side([1.0, 1.01, 1.02], first_id=7)
    for record in trials:
        record.node = TrialNode("cpu", "n1")
    assert [s.n for s in sides_of(plain + arms + trials)] == [3, 3, 3]


def test_history_keeps_the_kind_and_lists_it(tmp_path):
    """Read back from the history (the record and the summary alike), with no new column."""
    plain, profiled = finished_record(at=1000.0), anatomy_run(2.0, 0, at=1001.0)
    failed_profiled = anatomy_run(2.0, 0, at=1002.0, noted_only=True)
    first, warm = warm_runs([47.0, 2.0], 0, 1003.0, server_first=True)
    arm = finished_record(at=1005.0)
    with closing(History(history_path())) as history:
        ids = {"plain": history.record(plain, "gui"), "anatomy": history.record(profiled, "gui"),
               "noted": history.record(failed_profiled, "cli"), "server": history.record(first, "gui"),
               "warm": history.record(warm, "gui"), "arm": history.record(arm, "doctor")}
        listed = {run.id: run.kind for run in history.list_runs()}
        loaded = {name: history.load(run_id).kind for name, run_id in ids.items()}
    expected = {"plain": PLAIN, "anatomy": RunKind(anatomy=True), "noted": RunKind(anatomy=True),
                "server": RunKind(start=WARM_SERVER), "warm": RunKind(start=WARM), "arm": RunKind(origin="doctor")}
    assert loaded == expected
    assert {name: listed[run_id] for name, run_id in ids.items()} == expected


@pytest.mark.parametrize("kind", [RunKind(anatomy=True), RunKind(start=WARM_SERVER), RunKind(origin="cluster")])
def test_every_kind_but_plain_says_what_it_means(kind):
    assert kind.tip and kind.words != "plain" and kind.short != "plain"
