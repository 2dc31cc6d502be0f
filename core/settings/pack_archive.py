"""Cache packs as files to carry: one pack exported as a .tar.gz, imported on another machine
or node into its own folder, checked on the way in.

An archive holds one folder named by its key with the pack's files. On import every member
must be a plain file or folder inside that one folder (no links, no absolute or `..` paths,
nothing else), pack.json's key must hash to the folder's name, and each XLA entry must be
whole (cache_pack.entry_is_whole): an entry that is not is left out and named. An entry the
machine already has is kept as it is.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from . import cache_pack
from .caches import Stack, packs_root

MAX_MEMBER_BYTES = 8 * 1024 ** 3  # a member larger than a whole GPU's kernels is not a cache entry


class PackArchiveError(Exception):
    """An archive that cannot be imported, or a pack that cannot be exported; the message says why."""


def stack_of(key: Any) -> Stack | None:
    """The Stack a pack.json key describes, or None when it is not one."""
    if not isinstance(key, dict):
        return None
    try:
        return Stack(str(key["python"]), key.get("tensorflow"), key.get("driver"), tuple(key.get("gpus") or ()),
                     key.get("build"), tuple(key.get("capabilities") or ()), tuple(key.get("xla_flags") or ()))
    except (KeyError, TypeError):
        return None


def export_pack(folder: Path, archive: Path) -> int:
    """`folder` (one pack) written to `archive` (.tar.gz); the bytes written."""
    if cache_pack.read_meta(folder) is None:
        raise PackArchiveError(f"{folder} is not a cache pack (no readable {cache_pack.META}); "
                               "`tflaunch cache list` names the packs there are.")
    tmp = archive.with_name(f".{archive.name}.tmp")
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
                    tar.add(path, arcname=f"{folder.name}/{path.relative_to(folder)}", recursive=False)
        tmp.replace(archive)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise PackArchiveError(f"Cannot write {archive}: {exc.strerror or exc}. Choose a folder you can write.") \
            from None
    return archive.stat().st_size


def import_pack(archive: Path, root: Path | None = None) -> tuple[Path, list[str]]:
    """`archive` unpacked into its pack folder under `root` (packs_root()); the folder, and
    what was left out and why."""
    root = packs_root() if root is None else root
    try:
        tar = tarfile.open(archive, "r:gz")
    except (OSError, tarfile.TarError) as exc:
        raise PackArchiveError(f"{archive} is not a cache pack archive ({exc}); `tflaunch cache export KEY FILE` "
                               "makes one.") from None
    with tar:
        members = tar.getmembers()
        name = _one_folder(archive, members)
        meta = _meta(archive, tar, name)
        notes: list[str] = []
        target = root / name
        with tempfile.TemporaryDirectory(dir=_made(root)) as staging:
            for member in members:
                if not member.isfile():
                    continue
                relative = member.name.split("/", 1)[1]
                data = tar.extractfile(member)
                content = data.read() if data is not None else b""
                if relative.startswith(f"{cache_pack.XLA}/") and not cache_pack.entry_is_whole(content):
                    notes.append(f"Left out {relative}: not a whole XLA cache entry.")
                    continue
                path = Path(staging) / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            target.mkdir(parents=True, exist_ok=True)
            for path in sorted(Path(staging).rglob("*")):
                if path.is_file() and path.name != cache_pack.META:
                    where = target / path.relative_to(staging)
                    if where.exists():
                        continue  # an entry this machine has is kept as it is
                    where.parent.mkdir(parents=True, exist_ok=True)
                    shutil.move(str(path), where)
    kept = cache_pack.read_meta(target)
    if kept is None:  # its history (age, runs, hits) comes with it
        kept = {**cache_pack.new_meta(meta["key"]), **{k: meta[k] for k in ("created", "used", "runs", "hits", "misses")
                                                    if isinstance(meta.get(k), (int, float))
                                                    and not isinstance(meta[k], bool) and meta[k] >= 0}}
        kept["imported_from"] = str(archive)
    kept["entries"] = {}  # recorded afresh from what is there now (their sizes and times)
    cache_pack.write_meta(target, kept)
    cache_pack.record_run(target, 0, 0, run=False)
    return target, notes


def _one_folder(archive: Path, members: list[tarfile.TarInfo]) -> str:
    names = set()
    for member in members:
        parts = member.name.split("/")
        if member.name.startswith("/") or ".." in parts or not (member.isfile() or member.isdir()):
            raise PackArchiveError(f"{archive} has {member.name!r}, which is not a plain file inside the pack's "
                                   "folder: not imported. Export the pack again with `tflaunch cache export`.")
        if member.size > MAX_MEMBER_BYTES:
            raise PackArchiveError(f"{archive} has {member.name!r} of {member.size} bytes, more than a cache entry "
                                   "can be: not imported.")
        names.add(parts[0])
    if len(names) != 1:
        raise PackArchiveError(f"{archive} holds {len(names)} top folders, not one pack: not imported.")
    return names.pop()


def _meta(archive: Path, tar: tarfile.TarFile, name: str) -> dict[str, Any]:
    try:
        data = tar.extractfile(f"{name}/{cache_pack.META}")
        meta = json.load(io.TextIOWrapper(data, encoding="utf-8")) if data is not None else None
    except (KeyError, ValueError, tarfile.TarError):
        meta = None
    stack = stack_of(meta.get("key")) if isinstance(meta, dict) else None
    if not isinstance(meta, dict) or stack is None:
        raise PackArchiveError(f"{archive} has no readable {cache_pack.META} with its key: not imported.")
    if stack.key != name:
        raise PackArchiveError(f"{archive}'s folder {name} is not the key its {cache_pack.META} describes "
                               f"({stack.key}): not imported, as a pack must never cross its key.")
    return meta


def _made(root: Path) -> Path:
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PackArchiveError(f"Cannot make {root}: {exc.strerror or exc}.") from None
    return root
