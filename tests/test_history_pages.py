"""A long history, read a page at a time: RunPages (core), the HistoryLoader thread, and the
History tab that lists the first runs at once and the rest as they arrive. What is checked
is the structure (pages arrive, the count is the truth, no run is lost or listed twice,
sorting, filtering and selection hold while rows arrive); the timings are
tests/benchmarks/bench_history_tab.py's."""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import closing

import pytest
from PySide6.QtCore import Qt

from tflaunch.core.paths import history_path
from tflaunch.core.store.history import History
from tflaunch.core.store.run_pages import RunPages
from tflaunch.gui.history.history_listing import FIRST_ROWS
from tflaunch.gui.history.history_loader import PAGE_ROWS, HistoryLoader
from tflaunch.gui.history.history_table import ID_ROLE, READY, SORT_ROLE
from tflaunch.gui.history.history_view import HistoryView

from .big_history import big_history
from .builders import finished_record

COUNT = 1_234


@pytest.fixture
def long_history():
    """COUNT runs, newest first by id, with times to ready that sort differently."""
    path = big_history(history_path(), COUNT)
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("UPDATE runs SET time_to_ready = (id * 37) % 101 / 10.0")
    return path


def stored_ids(path) -> set[int]:
    with closing(sqlite3.connect(path)) as db:
        return {run_id for (run_id,) in db.execute("SELECT id FROM runs")}


def test_pages_come_newest_first_from_one_snapshot(long_history):
    pages = RunPages(long_history)
    assert pages.total == COUNT
    with closing(History(long_history)) as history:  # a run stored meanwhile, by the app
        history.record(finished_record("late", at=2_000_000_000.0), "gui")
    sizes, runs = [], []
    while not pages.done:
        page = pages.next_page(500)
        sizes.append(len(page))
        runs += page
    assert sizes == [500, 500, 234] and pages.next_page() == []
    assert [r.id for r in runs] == sorted(stored_ids(long_history) - {COUNT + 1}), "newest first, the late one not"
    assert all(a.launched_at >= b.launched_at for a, b in zip(runs, runs[1:], strict=False))


def test_the_loader_hands_over_every_page_in_order_and_stops_when_asked(long_history):
    pages = RunPages(long_history)
    first = pages.next_page(FIRST_ROWS)
    loader = HistoryLoader(pages)
    loader.start()
    taken = []
    while not loader.finished:
        taken += loader.take()
        time.sleep(0.001)
    assert len(taken) == COUNT - FIRST_ROWS and loader.problem is None
    assert [r.id for r in first + taken] == list(range(1, COUNT + 1))

    halfway = HistoryLoader(RunPages(long_history))
    halfway.start()
    while not halfway.take():
        time.sleep(0.001)
    halfway.stop()
    assert not any(t.name == "tflaunch-history-loader" and t.is_alive() for t in threading.enumerate())


def listed_ids(view) -> list[int]:
    return [view.model.run_id(row) for row in range(view.model.rowCount())]


def test_the_tab_lists_the_first_runs_at_once_and_the_rest_as_they_arrive(qtbot, long_history):
    with closing(History(long_history)) as history:
        view = HistoryView(history)
        qtbot.addWidget(view)
        assert view.model.rowCount() == FIRST_ROWS and view.loading
        assert view.count.text() == f"loading {FIRST_ROWS} of 1,234 runs… in {long_history}"
        counts = []
        view.listing.rows_added.connect(lambda: counts.append(view.model.rowCount()))
        view.select_ids([7, 1207])  # 1207 is not listed yet: selected when it comes
        view.filter.setText("MODEL-7")  # in any case: the runs of model-7
        view.table.sortByColumn(READY, Qt.SortOrder.AscendingOrder)
        qtbot.waitUntil(lambda: not view.loading, timeout=30_000)
        assert len(counts) > 2 and counts == sorted(counts), "pages arrived, rows only added"
        assert sorted(listed_ids(view)) == sorted(stored_ids(long_history)), "every run, once"
        shown = [view.proxy.index(row, 0).data(ID_ROLE) for row in range(view.proxy.rowCount())]
        assert sorted(shown) == sorted(i for i in stored_ids(long_history) if i % 50 == 7)
        # The count says what the filter shows of all the runs (issue 36: it ignored the filter).
        assert view.count.text() == f"{len(shown)} of 1,234 runs shown (filter: MODEL-7) in {long_history}"
        readies = [view.proxy.index(row, READY).data(SORT_ROLE) for row in range(view.proxy.rowCount())]
        assert readies == sorted(readies), "late rows took their sorted places"
        assert sorted(view.selected_ids()) == [7, 1207]
        view.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        view.filter.clear()
        assert sorted(view.selected_ids()) == [7, 1207], "the selection follows its runs through a sort"
        assert view.proxy.index(0, 0).data(ID_ROLE) == 1 and view.proxy.rowCount() == COUNT


def test_a_refresh_while_loading_starts_over_and_loses_or_doubles_nothing(qtbot, long_history):
    with closing(History(long_history)) as history:
        view = HistoryView(history)
        qtbot.addWidget(view)
        qtbot.waitUntil(lambda: view.model.rowCount() > FIRST_ROWS + PAGE_ROWS, timeout=30_000)
        history.delete([5])
        view.refresh()
        assert view.model.rowCount() == FIRST_ROWS
        qtbot.waitUntil(lambda: not view.loading, timeout=30_000)
        assert sorted(listed_ids(view)) == sorted(stored_ids(long_history)) and 5 not in listed_ids(view)
        assert view.count.text() == f"1,233 runs in {long_history}"


def test_the_first_page_is_read_through_an_index_not_a_sort_of_every_run(tmp_path):
    """The newest runs come straight off an index: sorting 10,000 runs before the first
    screen cost about 50 ms of the History tab's first open (issue 36)."""
    path = big_history(tmp_path / "h.sqlite3", 50)
    with closing(sqlite3.connect(path)) as db:
        plan = " ".join(row[-1] for row in db.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM runs ORDER BY launched_at DESC, id DESC"))
    assert "runs_by_launch" in plan and "TEMP B-TREE" not in plan, plan
