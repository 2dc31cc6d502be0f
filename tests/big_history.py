"""A history file of many runs, quickly: one run stored through History, then copied row by
row in SQL (its phases and samples too), each copy a second older and of one of 50 models."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from tflaunch.core.store.history import History

from .builders import finished_record

NEWEST = 1_700_000_000.0


def big_history(path: Path, count: int) -> Path:
    """`count` runs at `path` (newest first: run i launched NEWEST - i s); the file closed."""
    with closing(History(path)) as history:
        first = history.record(finished_record("model-0", at=NEWEST), "cli")
        db = history._db  # bulk copies in one transaction: 10,000 runs in well under a second
        columns = [row[1] for row in db.execute("PRAGMA table_info(runs)") if row[1] != "id"]
        names = ",".join(columns)
        db.execute("BEGIN")
        db.execute(f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                   f" INSERT INTO runs ({names}) SELECT {names.replace('launched_at', 'launched_at - i')}"
                   f" FROM runs, n WHERE runs.id = ?", (count - 1, first))
        db.execute("UPDATE runs SET model = 'model-' || (id % 50)")
        for table, columns in (("phases", "name, state, started, duration, rss, peak_rss, latency, parts, seq, extra"),
                               ("samples", "t, rss")):
            copied = ", ".join(f"one.{c.strip()}" for c in columns.split(","))
            db.execute(f"INSERT INTO {table} (run_id, {columns}) SELECT runs.id, {copied} FROM runs"
                       f" JOIN {table} AS one ON one.run_id = ? WHERE runs.id != ?", (first, first))
        db.execute("COMMIT")
    return path
