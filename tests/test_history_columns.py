"""What History's columns say of scripts and programs: how long a script ran (it has no
ready point), sorted as seconds among the times to ready, and whether a launch asked to start
warm started warm or cold (its warm_start / cold_start mark, as the run view's headline says)."""

from __future__ import annotations

import sys
from contextlib import closing

import pytest
from PySide6.QtCore import Qt

from tflaunch.core.paths import history_path
from tflaunch.core.run import events as ev
from tflaunch.core.run.record import RunRecord
from tflaunch.core.run.words import COLD_MARK, WARM_MARK, start_kind
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.gui.history.history_table import ID_ROLE, READY, SORT_ROLE, STATUS
from tflaunch.gui.history.history_view import HistoryView

from .builders import finished_record, store_old_script_run

AT = 1_700_000_000.0


def program_run(mark: str) -> RunRecord:
    """A program observed to its first step, launched warm."""
    record = RunRecord(LaunchConfig(program=("python", "/home/me/train.py"), until="first_step"), launched_at=AT)
    record.apply(ev.Hello(AT + 0.01, "spawn", 7, 0.01, "python"))
    record.apply(ev.Mark(AT + 0.02, "spawn", mark))
    record.apply(ev.PhaseStart(AT + 0.1, "first_step"))
    record.apply(ev.PhaseEnd(AT + 0.6, "first_step", 0.5, 10, 20))
    record.finish(0)
    return record


def cells(view: HistoryView, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> dict[int, object]:
    return {view.model.item(row, 0).data(ID_ROLE): view.model.item(row, column).data(role)
            for row in range(view.model.rowCount())}


def test_old_script_runs_read_as_programs_to_their_exit_and_warm_launches_say_how_they_started(qtbot):
    """Rows of the old `script` subject (the Launch script before one engine) show their exit
    as their ready point, as a program run to its exit does; how a warm launch started is said."""
    records = {"warm program": program_run(WARM_MARK), "model": finished_record(at=AT, ready_s=1.0)}
    assert start_kind(records["warm program"]) == "warm", "a program observed warm marks it itself"
    old = {"warm script": (12.3, WARM_MARK, 0), "cold script": (0.5, COLD_MARK, 0), "plain script": (75.0, None, 0),
           "failed script": (3.0, WARM_MARK, 2)}
    with closing(History(history_path())) as history:
        ids = {name: history.record(record, "gui") for name, record in records.items()}
        ids.update({name: store_old_script_run(history, [sys.executable, "/home/me/train.py"], AT, ran, mark, code)
                    for name, (ran, mark, code) in old.items()})
        view = HistoryView(history)
        qtbot.addWidget(view)
        ready, status = cells(view, READY), cells(view, STATUS)
        tips, keys = cells(view, STATUS, Qt.ItemDataRole.ToolTipRole), cells(view, READY, SORT_ROLE)
        ready_tips = cells(view, READY, Qt.ItemDataRole.ToolTipRole)
    named = {name: (ready[i], status[i]) for name, i in ids.items()}
    assert named == {"warm script": ("12.30 s", "ok, warm"), "cold script": ("500 ms", "ok, cold"),
                     "plain script": ("1 min 15 s", "ok"), "failed script": ("–", "failed, warm"),
                     "warm program": ("600 ms", "ok, warm"), "model": ("1.02 s", "ok")}
    assert "warm server" in tips[ids["warm script"]] and "warm start was not possible" in tips[ids["cold script"]]
    assert not tips[ids["model"]]
    assert not ready_tips[ids["plain script"]] and not ready_tips[ids["model"]]
    assert keys[ids["warm script"]] == pytest.approx(12.3) and keys[ids["model"]] > 1.0, "seconds, sortable as numbers"

    view.table.sortByColumn(READY, Qt.SortOrder.AscendingOrder)
    order = [view.proxy.index(row, 0).data(ID_ROLE) for row in range(view.proxy.rowCount())]
    assert order == [ids[n] for n in ("cold script", "warm program", "model", "warm script", "plain script",
                                      "failed script")]
    view.filter.setText("warm")
    assert view.proxy.rowCount() == 3, "the words are found by the filter"
