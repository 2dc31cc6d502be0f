"""A cache pack: the folder of compiled work kept for one stack, and the guard that keeps a bad
pack from costing more than the cache.

One pack per key (caches.Stack: the interpreter, TensorFlow and its build, the XLA flag set,
the driver and the GPUs); it holds TensorFlow's persistent XLA cache (`xla/`), and on a GPU
XLA's per-fusion autotune cache (`autotune/`) and the CUDA kernel cache (`cuda/`), beside
`pack.json`: its key, its age, its runs, hits and misses, and what each XLA entry was when it
was written.

Checked on TensorFlow 2.21 (CPU): a truncated entry makes the program fail
(OutOfRangeError "Read less bytes than requested"), and a full disk does too
(ResourceExhaustedError, leaving a `*.tmp`); TensorFlow writes an entry under a temporary
name and renames it. So before every start a damaged entry is removed (or the pack is left
out when it cannot be), leftovers of a failed write are removed, and a pack that cannot be
written or has little free space is used read-only; each says why, and the run goes on.
Nothing is written outside the pack folder.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

META = "pack.json"
SCHEMA = 1
XLA = "xla"
ENTRY_SUFFIX = ".pb"
# Below this much free space a pack is read-only: TensorFlow fails the program, not the
# write, when an entry does not fit (checked: ResourceExhaustedError on a full tmpfs).
MIN_FREE_BYTES = 256 * 1024 ** 2
# A write under way on another node of a shared pack lasts seconds: only an older one is a leftover.
LEFTOVER_AGE_S = 3600.0


@dataclass(frozen=True)
class PackState:
    """Whether a run may use the pack, and how."""

    usable: bool
    read_only: bool = False
    why: str = ""  # why it is read-only or left out ("" when it is used as it is)


def read_meta(folder: Path) -> dict[str, Any] | None:
    """The pack's pack.json; None when it is missing or damaged."""
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and meta.get("schema") == SCHEMA else None


def write_meta(folder: Path, meta: dict[str, Any]) -> bool:
    """pack.json written whole (a temporary file in the pack, renamed); False when it cannot be."""
    tmp = folder / f".{META}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"  # nodes of a shared pack: pids may repeat
    try:
        tmp.write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, folder / META)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False
    return True


def new_meta(key: dict[str, Any]) -> dict[str, Any]:
    now = time.time()
    return {"schema": SCHEMA, "key": key, "created": now, "used": None, "runs": 0, "hits": 0, "misses": 0,
            "entries": {}}


def entries(folder: Path) -> dict[str, os.stat_result]:
    """The pack's finished XLA entries by name."""
    out: dict[str, os.stat_result] = {}
    try:
        with os.scandir(folder / XLA) as it:
            for entry in it:
                if entry.name.endswith(ENTRY_SUFFIX) and entry.is_file(follow_symlinks=False):
                    out[entry.name] = entry.stat(follow_symlinks=False)
    except OSError:
        pass
    return out


def snapshot(folder: Path) -> dict[str, int]:
    """What the pack holds: its XLA entries and all its bytes."""
    return {"entries": len(entries(folder)), "bytes": size_of(folder)}


def size_of(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def entry_is_whole(data: bytes) -> bool:
    """Whether `data` is a whole serialized XlaSerializedCacheEntry: its top-level fields
    (1 key, 2 HLO module, 3 executable; all length-delimited) end exactly at the end, with
    the executable there. A cut entry, the damage a full disk or a killed copy leaves, fails."""
    i, seen = 0, set()
    while i < len(data):
        tag, i = _varint(data, i)
        if tag is None or tag & 7 != 2:
            return False
        length, i = _varint(data, i)
        if length is None or i + length > len(data):
            return False
        seen.add(tag >> 3)
        i += length
    return 3 in seen


def _varint(data: bytes, i: int) -> tuple[int | None, int]:
    value = shift = 0
    while i < len(data) and shift < 64:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, i
        shift += 7
    return None, i


def damaged(folder: Path, meta: dict[str, Any] | None) -> list[str]:
    """Entries that would fail the program: not whole, or changed since the run that wrote
    them was recorded (size or time differ and the bytes do not parse whole)."""
    known = (meta or {}).get("entries") or {}
    bad = []
    for name, st in entries(folder).items():
        was = known.get(name) if isinstance(known, dict) else None
        if isinstance(was, dict) and was.get("size") == st.st_size and was.get("mtime") == st.st_mtime:
            continue  # as the run that wrote it left it
        try:
            whole = entry_is_whole((folder / XLA / name).read_bytes())
        except OSError:
            whole = False
        if not whole:
            bad.append(name)
    return bad


def leftovers(folder: Path) -> list[str]:
    """Files of writes that never finished (TensorFlow renames a whole entry into place), an
    hour old: a younger one may be a write under way in another run of a shared pack."""
    now, out = time.time(), []
    try:
        with os.scandir(folder / XLA) as it:
            for entry in it:
                if not entry.name.endswith(ENTRY_SUFFIX) and now - entry.stat().st_mtime > LEFTOVER_AGE_S:
                    out.append(entry.name)
    except OSError:
        pass
    return out


def state(folder: Path) -> PackState:
    """Whether a run may use the pack at `folder`, read without writing anything."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    writable = os.access(existing, os.W_OK) and (existing == folder or not _read_only_fs(existing))
    xla = folder / XLA
    if writable and xla.exists() and not os.access(xla, os.W_OK):
        writable = False
    if not writable:
        if not entries(folder):
            return PackState(False, why=f"the pack {folder} cannot be written and holds nothing yet")
        if damaged(folder, read_meta(folder)):
            return PackState(False, why=f"the pack {folder} has a damaged entry and cannot be written to remove it")
        return PackState(True, True, f"the pack {folder} cannot be written: it is read, not filled")
    try:
        free = shutil.disk_usage(existing).free
    except OSError:
        free = 0
    if free < MIN_FREE_BYTES:
        if damaged(folder, read_meta(folder)):
            return PackState(False, why=f"the disk of {folder} is almost full and the pack has a damaged entry")
        return PackState(True, True, f"the disk of {folder} has {free // 1024 ** 2} MiB free, under "
                                     f"{MIN_FREE_BYTES // 1024 ** 2} MiB: the pack is read, not filled "
                                     "(TensorFlow fails a program whose new entry does not fit)")
    return PackState(True)


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def repair(folder: Path) -> list[str]:
    """Before a start: damaged entries and unfinished writes removed; what was removed, and why."""
    notes = []
    meta = read_meta(folder)
    for name in leftovers(folder):
        try:
            (folder / XLA / name).unlink()
        except OSError:
            continue
        notes.append(f"Removed {name} from the cache pack {folder}: an XLA cache entry whose write never "
                     "finished (a full disk or a killed run).")
    for name in damaged(folder, meta):
        try:
            (folder / XLA / name).unlink()
        except OSError:
            continue
        if meta is not None:
            meta.get("entries", {}).pop(name, None)
        notes.append(f"Removed the damaged XLA cache entry {name} from the cache pack {folder}: it is cut or "
                     "changed since it was written, and TensorFlow would fail the program reading it. "
                     "That program compiles again.")
    if notes and meta is not None:
        write_meta(folder, meta)
    return notes


def mark_unread(folder: Path) -> bool:
    """Each entry's access time set just before its write time, so that a read moves it past
    (Linux's relatime and strictatime both do): the hits of a run whose log level hides
    TensorFlow's lines. False when reads cannot be seen (noatime, a read-only pack)."""
    try:
        if os.statvfs(folder).f_flag & (os.ST_NOATIME | os.ST_RDONLY):
            return False
        for name, st in entries(folder).items():
            os.utime(folder / XLA / name, ns=(st.st_mtime_ns - 1_000_000_000, st.st_mtime_ns))
    except OSError:
        return False
    return True


def read_since_marked(folder: Path) -> int:
    """Entries read since mark_unread: the programs a run loaded from the pack."""
    return sum(1 for st in entries(folder).values() if st.st_atime_ns >= st.st_mtime_ns)


def record_run(folder: Path, hits: int, misses: int, *, run: bool = True) -> dict[str, int]:
    """After a run: its new entries noted (size and time, what `damaged` checks), its hits and
    misses counted; what the pack holds now. `run=False`: the entries alone (an import)."""
    meta = read_meta(folder)
    if meta is None:
        return snapshot(folder)
    known = meta.setdefault("entries", {})
    for name, st in entries(folder).items():
        known[name] = {"size": st.st_size, "mtime": st.st_mtime, "added": known.get(name, {}).get("added", time.time())}
    for name in [n for n in known if not (folder / XLA / n).exists()]:
        del known[name]
    meta["runs"] = int(meta.get("runs") or 0) + (1 if run else 0)
    meta["hits"] = int(meta.get("hits") or 0) + hits
    meta["misses"] = int(meta.get("misses") or 0) + misses
    meta["used"] = time.time()
    write_meta(folder, meta)
    return snapshot(folder)
