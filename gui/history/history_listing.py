"""HistoryListing: a history's runs into a RunTable, the first at once, the rest as a
HistoryLoader thread reads them, a few hundred at a time, a few times a second.

The first FIRST_ROWS runs are read on the GUI thread (a few milliseconds): the tab shows
them the moment it is built, and a history of ordinary size is whole after every refresh,
as code that refreshes and then reads the table expects. A longer one goes on loading
without ever holding the window: the thread reads and checks the pages, and the tab puts
what it has read into the table a few times a second.

Once listed, it follows the file: twice a second it asks whether anything was written (by
this window, another one, `tflaunch bench` in a terminal) and, if so, adds the runs that came,
takes out the ones that went and changes the ones that ended (RunChanges), without listing
10,000 runs again. More than FIRST_ROWS new runs at once are listed again from the start.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal

from tflaunch.core.store.history import History, HistoryError
from tflaunch.core.store.rows import DAMAGED, RunSummary
from tflaunch.core.store.run_changes import RunChanges, TooManyChanges
from tflaunch.core.store.run_pages import RunPages

from .history_loader import HistoryLoader
from .history_table import RunTable

FIRST_ROWS = 100
# Rows go into the table at most every FLUSH_S, FLUSH_ROWS at most at once (some 5 ms of
# making rows): each insertion repaints the table (some 9 ms), so inserting as pages came,
# every 5 ms, kept the window painting and left it no time between.
FLUSH_S = 0.05
FLUSH_ROWS = 500
TICK_MS = 5
FOLLOW_MS = 500  # how often the file is asked whether anything was written


class HistoryListing(QObject):
    rows_added = Signal()  # more runs are in the table (or fewer, or changed), or the loading ended
    problem = Signal(str)  # the history could not be read (all of it, or past some runs)

    def __init__(self, table: RunTable, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.table = table
        self.listed = self.damaged = self.total = 0
        self.failure: str | None = None  # why not every run could be listed
        self._loader: HistoryLoader | None = None
        self._waiting: list[RunSummary] = []  # read by the loader, not yet in the table
        self._flushed = 0.0  # when rows last went into the table (time.monotonic)
        self._tick = QTimer(self)  # parented: it stops with the listing
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._on_tick)
        self._changes: RunChanges | None = None  # the file followed, once its runs are listed
        self._follow = QTimer(self)
        self._follow.setInterval(FOLLOW_MS)
        self._follow.timeout.connect(self._on_follow)
        self._history: History | None = None
        self._told: str | None = None  # the last problem said while following: said once

    @property
    def loading(self) -> bool:
        return self._loader is not None

    @property
    def following(self) -> bool:
        """Every run of the file is listed, and the listing follows it."""
        return self._changes is not None and not self.loading

    def load(self, history: History | None) -> None:
        """List the history's runs (again): the first now, the rest as they are read."""
        self.stop()
        self.table.clear()
        self.listed = self.damaged = self.total = 0
        self.failure, self._waiting, self._history, self._told = None, [], history, None
        if history is None:
            return
        try:
            # Made first: whatever is written after it is found, the pages' snapshot being later.
            self._changes = RunChanges(history.path)
            self.destroyed.connect(self._changes.close)  # a listing deleted closes its connection
            pages = RunPages(history.path)
            self.total = pages.total
            self._add(pages.next_page(FIRST_ROWS))
        except HistoryError as exc:
            self.stop()
            self.failure = str(exc)
            self.problem.emit(self.failure)
            return
        self._follow.start()
        if not pages.done:
            self._loader = HistoryLoader(pages)
            # A listing deleted while it loads stops its reader (a plain thread, no child of ours).
            self.destroyed.connect(self._loader.stop)
            self._tick.start()  # the first tick starts the thread: the first rows paint without it

    def stop(self) -> None:
        """Stop loading and following (a load starts both again)."""
        self._stop_loading()
        self._follow.stop()
        if self._changes is not None:
            self._changes.close()
            self.destroyed.disconnect(self._changes.close)
            self._changes = None

    def _stop_loading(self) -> None:
        self._tick.stop()
        if self._loader is not None:
            self._loader.stop()
            self.destroyed.disconnect(self._loader.stop)
            self._loader = None

    def sync(self) -> None:
        """The runs written since they were listed into the table now: added, changed,
        removed (all of them listed again when too many came)."""
        changes = self._changes
        if changes is None or self.loading:
            return
        try:
            found = changes.read(FIRST_ROWS)
        except TooManyChanges:
            self.load(self._history)
            self.rows_added.emit()
            return
        except HistoryError as exc:
            if str(exc) != self._told:  # said once, not twice a second
                self._told = str(exc)
                self.problem.emit(self._told)
            return
        self._told = None
        if not found:
            return
        self.table.remove(found.removed)
        self.table.update(found.updated)
        self.table.append(found.added)
        self.listed = self.total = self.table.rowCount()
        self.damaged = self.table.count_status(DAMAGED)
        self.rows_added.emit()

    def _on_follow(self) -> None:
        if self._changes is not None and not self.loading and self._changes.changed():
            self.sync()

    def _add(self, runs: list[RunSummary]) -> None:
        self.table.append(runs)
        self.listed += len(runs)
        self.damaged += sum(run.status == DAMAGED for run in runs)
        if self._changes is not None:
            self._changes.note(runs)

    def _on_tick(self) -> None:
        loader = self._loader
        if loader is None:
            return
        if not loader.started:
            loader.start()
            self._flushed = time.monotonic()
            return
        while len(self._waiting) < FLUSH_ROWS and (page := loader.take()):
            self._waiting += page  # no more: the thread waits while its pages are not taken
        now = time.monotonic()
        if self._waiting and (now - self._flushed >= FLUSH_S or loader.finished):
            self._add(self._waiting[:FLUSH_ROWS])
            del self._waiting[:FLUSH_ROWS]
            self._flushed = now
        elif self._waiting or not loader.finished:
            return  # more to come, or to wait for
        if not self._waiting and loader.finished:
            self._stop_loading()
            if self.listed < self.total:
                self.stop()  # not every run listed: nothing to follow from
                self.failure = loader.problem or "the reading stopped early"
                self.problem.emit(self.failure)
        self.rows_added.emit()
