"""RunPages: every run of a history, newest first, a page at a time, for a list that shows
the first runs at once and the rest as they are read (the app's History tab).

It reads over a read-only connection of its own inside one read transaction: the count
and every page come from the same state of the file, so no run is listed twice or lost
while the app writes new ones, and the pages can be read on another thread than the one
that opened it (one thread at a time).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .history_file import connect_reader, explain
from .rows import SUMMARY_COLUMNS, RunSummary, summary_from_row

PAGE_SIZE = 500


class RunPages:
    def __init__(self, path: Path) -> None:
        """Open the history at `path` and count its runs; HistoryError if it cannot be read."""
        self.path = Path(path)
        self.total = 0  # runs in the file, counted in the snapshot the pages come from
        self._cursor: sqlite3.Cursor | None = None
        try:
            self._db = connect_reader(self.path, any_thread=True)
        except sqlite3.Error as exc:
            raise explain(self.path, exc, "read") from exc
        try:
            self._db.execute("BEGIN")  # one snapshot for the count and every page
            if self._db.execute("PRAGMA user_version").fetchone()[0] == 0:
                self.close()  # a new file nobody could set up yet (read-only): no runs table
                return
            self.total = self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            self._cursor = self._db.execute(f"SELECT {SUMMARY_COLUMNS} FROM runs ORDER BY launched_at DESC, id DESC")
        except sqlite3.Error as exc:
            self._db.close()
            raise explain(self.path, exc, "read") from exc

    @property
    def done(self) -> bool:
        return self._cursor is None

    def next_page(self, size: int = PAGE_SIZE) -> list[RunSummary]:
        """The next `size` runs or fewer, each checked (a damaged one listed as such); an
        empty page at the end, when the connection is closed."""
        if self._cursor is None:
            return []
        try:
            rows = self._cursor.fetchmany(size)
        except sqlite3.Error as exc:
            self.close()
            raise explain(self.path, exc, "read") from exc
        if len(rows) < size:
            self.close()
        return [summary_from_row(row) for row in rows]

    def close(self) -> None:
        self._cursor = None
        self._db.close()

