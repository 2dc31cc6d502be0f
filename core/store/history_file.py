"""The run history's file: opening it whatever state it is in, and what a failure means.

SQLite's errors become HistoryError, whose message names the file, the cause and what
to do, so that no caller has to know SQLite to tell a user something useful.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import time
from pathlib import Path
from urllib.parse import quote

BUSY_TIMEOUT_S = 3.0  # how long a write waits for another process's write to end


class HistoryError(Exception):
    """The history (or one run in it) cannot be used: `what` names the file and the cause,
    `advice` says what to do; `kind` is locked, damaged, read-only, full (the disk refuses
    writes), damaged run or other."""

    def __init__(self, what: str, advice: str = "", kind: str = "other") -> None:
        self.what, self.advice, self.kind = what, advice, kind
        super().__init__(f"{what[:1].upper()}{what[1:]}." + (f" {advice}" if advice else ""))

    def not_stored(self, subject: str = "this run is") -> str:
        """The line that tells a user what was not stored and why: "…; this run is not stored. …"."""
        return f"{self.what}; {subject} not stored." + (f" {self.advice}" if self.advice else "")


def _read_only_mount(path: Path) -> bool:
    """Whether the nearest existing folder of `path` is on a file system mounted read-only
    (EROFS): no chmod helps there, so the advice must not say chmod."""
    folder = path if path.exists() else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _unwritable(path: Path) -> str | None:
    """Why the history at `path` cannot be written here, or None when it can."""
    if _read_only_mount(path):
        return "its file system is mounted read-only"
    if path.exists():
        if not os.access(path, os.W_OK):
            return "no permission to write the file"
        # SQLite makes its -wal and -shm files beside the history.
        if not os.access(path.parent, os.W_OK) and not all(
                os.access(f"{path}{extra}", os.W_OK) for extra in ("-wal", "-shm")):
            return f"the folder {path.parent} is read-only"
        return None
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return None if os.access(folder, os.W_OK) else f"the folder {folder} is read-only"


def _use_wal(db: sqlite3.Connection) -> None:
    """WAL: readers never wait for a writer. Of several processes creating the file at once,
    some find it busy for a moment and try again, for BUSY_TIMEOUT_S in all."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL").fetchone()
            return  # WAL, or a mode SQLite keeps (the history works in either)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(0.05)


def stored_text(data: bytes) -> str:
    """A TEXT value as read: UTF-8, and a byte that is not shown as `\\xNN`. SQLite stores
    whatever bytes it is given; sqlite3's default decoding raises for the whole query, and
    one such value in one row hid every run from the list, export, report and History tab."""
    return data.decode("utf-8", "backslashreplace")


def _writer(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)  # explicit transactions
    db.text_factory = stored_text
    try:
        db.execute("PRAGMA foreign_keys = ON")
        _use_wal(db)
        # WAL with NORMAL sync: no fsync per commit (runs are written while the child starts,
        # and a stalled fsync must not slow what is measured); still never a corrupt file.
        db.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        db.close()
        raise
    return db


def connect(path: Path) -> tuple[sqlite3.Connection, HistoryError | None]:
    """A connection to the history at `path`, and why it is read-only when it is: a file
    tflaunch may not write (or cannot, on a full disk) is still read: the app lists it,
    `tflaunch report` reports it."""
    why = _unwritable(path)
    if why is None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return _writer(path), None
        except OSError as exc:
            why = exc.strerror or str(exc)
        except sqlite3.OperationalError as exc:
            name = getattr(exc, "sqlite_errorname", "")
            if path.exists() and name.startswith(("SQLITE_FULL", "SQLITE_IOERR")):
                # WAL needs its index file (-shm) made or grown even to read; on a full
                # disk it cannot be, and the file is read as it is instead.
                return connect_reader(path), unwritable_disk(path, exc, "written")
            if not name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
                raise
            why = str(exc)
    advice = (f"To store runs, make it writable (chmod u+w {shlex.quote(str(path))}, and its folder) "
              "or set TFLAUNCH_DATA_DIR to a writable folder.")
    if _read_only_mount(path):
        advice = ("To store runs, set TFLAUNCH_DATA_DIR to a folder on a writable file system (or remount this "
                  "one read-write; permissions cannot help on a read-only mount).")
    if not path.exists():
        raise HistoryError(f"the run history {path} cannot be created ({why})", advice, "read-only")
    return connect_reader(path), HistoryError(f"the run history {path} is read-only ({why})", advice, "read-only")


def connect_reader(path: Path, any_thread: bool = False) -> sqlite3.Connection:
    """A read-only connection to the history at `path` (`any_thread`: for a reader that
    hands it to another thread, one thread at a time)."""
    uri = f"file:{quote(str(path))}?mode=ro"
    db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=not any_thread)
    db.text_factory = stored_text
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError as exc:
        db.close()
        if "locked" in str(exc):
            raise
    # A WAL file whose index (-shm) cannot be made (a read-only folder, a full disk): read
    # the file as it is, without locks (what a writer has not checkpointed yet is not seen).
    db = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=not any_thread)
    db.text_factory = stored_text
    db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return db


FULL_BELOW_BYTES = 1 << 20  # SQLite needs room for its WAL index (32 KiB) and a page or two


def _disk_full(folder: Path) -> bool:
    try:
        stat = os.statvfs(folder)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < FULL_BELOW_BYTES


def unwritable_disk(path: Path, exc: sqlite3.Error, doing: str) -> HistoryError:
    """The disk of the history refused a write: full, or failing. What is in the file can
    still be read; what SQLite has not yet moved from the -wal file into it is said."""
    wal = Path(f"{path}-wal")
    unseen = (f" Runs still in {wal} (not yet moved into the file) are not listed until then."
              if wal.exists() and wal.stat().st_size > 0 else "")
    if _disk_full(path.parent):
        return HistoryError(f"the run history {path} could not be {doing} (the disk is full)",
                            f"Free some space on the disk of {path.parent}; until then runs are measured and "
                            f"shown but not stored.{unseen}", "full")
    return HistoryError(f"the run history {path} could not be {doing} (a disk error: {exc})",
                        f"Check the disk of {path.parent} (space, quota, file size limit); until then runs are "
                        f"measured and shown but not stored.{unseen}", "full")


def explain(path: Path, exc: sqlite3.Error, doing: str) -> HistoryError:
    """What an SQLite error means for the user: the file, the cause, what to do."""
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc):
        return HistoryError(
            f"the run history {path} could not be {doing} (database is locked by another process "
            f"for more than {BUSY_TIMEOUT_S:g} s)",
            "Let the other tflaunch finish, or close the program that holds it, then try again.", "locked")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or type(exc) is sqlite3.DatabaseError:
        return HistoryError(
            f"the run history {path} is damaged ({exc})",
            f"tflaunch left it untouched. Move it aside (mv {shlex.quote(str(path))} "
            f"{shlex.quote(f'{path}.damaged')}) to start a new one.",
            "damaged")
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return HistoryError(
            f"the run history {path} could not be {doing} ({exc})",
            "Make it and its folder writable, or set TFLAUNCH_DATA_DIR to a writable folder.", "read-only")
    if name.startswith(("SQLITE_FULL", "SQLITE_IOERR")):
        return unwritable_disk(path, exc, doing)
    return HistoryError(f"the run history {path} could not be {doing} ({exc})",
                        "Check the file and its disk; tflaunch left it untouched.")
