"""HistoryLoader: the runs of a history read off the GUI thread, a page at a time.

Reading and checking a run costs some 40 µs of Python: 10,000 runs read on the GUI thread
froze the window for a second. Here a plain Python thread reads the pages (over RunPages'
own connection) and queues them; the History tab takes them on its timer and puts them into
its table a few times a second. At most a few pages wait: the thread then waits too, so it
holds no thousands of runs nobody has shown yet and leaves the interpreter to the GUI
thread while the tab catches up. No Qt: a test drives it without an event loop.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from tflaunch.core.store.history import HistoryError
from tflaunch.core.store.rows import RunSummary
from tflaunch.core.store.run_pages import RunPages

PAGE_ROWS = 100
PAGES_AHEAD = 4  # read, waiting for the tab to take them
CHUNK_ROWS = 10  # checked while holding Python's interpreter lock: some 0.4 ms
PAUSE_S = 0.0005
JOIN_TIMEOUT_S = 2.0  # one page's read at most


class HistoryLoader:
    """Reads every page `pages` has left; `take` hands them over in the order read."""

    def __init__(self, pages: RunPages) -> None:
        self._pages = pages
        # deque's append and popleft are atomic: the one producer and one consumer need no lock.
        self._queue: deque[list[RunSummary]] = deque()
        self._room = threading.Semaphore(PAGES_AHEAD)
        self._stopping = threading.Event()
        self._finished = threading.Event()
        self.problem: str | None = None  # why the rest could not be read, once finished
        # A daemon: an app that exits while a long history loads must not wait for it.
        self._thread = threading.Thread(target=self._run, name="tflaunch-history-loader", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    @property
    def finished(self) -> bool:
        """Every page read (or the reading stopped) and taken."""
        return self._finished.is_set() and not self._queue

    def take(self) -> list[RunSummary]:
        """The oldest page read and not yet taken; [] when none is waiting."""
        if not self._queue:
            return []
        page = self._queue.popleft()
        self._room.release()
        return page

    def stop(self) -> None:
        """Stop reading (a refresh starts a new load); safe to call twice."""
        self._stopping.set()
        if not self.started:  # stopped before it began: no thread to close the connection
            self._pages.close()
            self._finished.set()
            return
        self._room.release()  # a thread waiting for room wakes up and sees the stop
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(JOIN_TIMEOUT_S)

    def _read_page(self) -> list[RunSummary]:
        """PAGE_ROWS runs, read and checked CHUNK_ROWS at a time with a pause between: the
        GUI thread, waiting for the interpreter lock to paint, gets it at the next pause
        (half a millisecond away) instead of after Python's switch interval (5 ms), each
        time it asks."""
        page: list[RunSummary] = []
        while len(page) < PAGE_ROWS and not self._pages.done and not self._stopping.is_set():
            page += self._pages.next_page(CHUNK_ROWS)
            time.sleep(PAUSE_S)
        return page

    def _run(self) -> None:
        try:
            while not self._stopping.is_set() and not self._pages.done:
                self._room.acquire()
                if self._stopping.is_set():
                    break
                page = self._read_page()
                if page:
                    self._queue.append(page)
        except HistoryError as exc:
            self.problem = str(exc)
        finally:
            # The connection was opened on the GUI thread for the first page; it is closed
            # on the thread that used it last.
            self._pages.close()
            self._finished.set()
