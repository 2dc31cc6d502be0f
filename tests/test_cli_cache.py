"""`tflaunch cache list|show|prune|export|import` on packs made here: what each shows, what
prune removes, and an archive that round-trips, or is refused with its reason."""

from __future__ import annotations

import io
import json
import sys
import tarfile
from pathlib import Path

import pytest

from tflaunch.core.cli.main import main
from tflaunch.core.settings import cache_pack, caches
from tflaunch.core.settings.pack_archive import PackArchiveError, import_pack

ENTRY = bytes([10, 3]) + b"key" + bytes([18, 3]) + b"hlo" + bytes([26, 20]) + b"x" * 20
GONE = caches.Stack("/gone/bin/python", "2.20.0", None, (), "cpu")


def make_pack(stack: caches.Stack, entries: int = 1) -> Path:
    caches.prepare(None, True, stack)
    for i in range(entries):
        (caches.warm_folder("xla", stack) / f"xla_compile_cache__{i}__1__XLA_CPU_JIT.pb").write_bytes(ENTRY)
    cache_pack.record_run(caches.pack_folder(stack), 1, entries)
    return caches.pack_folder(stack)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["cache", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_and_show_say_size_key_age_and_hits(capsys: pytest.CaptureFixture[str]) -> None:
    make_pack(GONE, 2)
    code, out, _ = cli(capsys, "list", "--json")
    (pack,) = json.loads(out)["packs"]
    assert code == 0 and pack["key"] == GONE.key and pack["entries"] == 2 and pack["bytes"] > 2 * len(ENTRY)
    assert (pack["runs"], pack["hits"], pack["misses"]) == (1, 1, 2)
    assert pack["state"] == "stale" and "interpreter /gone/bin/python is gone" in pack["why"]
    code, out, _ = cli(capsys, "show", GONE.key[:5])
    assert code == 0 and "tensorflow: 2.20.0" in out and "xla_compile_cache__1__1__XLA_CPU_JIT.pb" in out
    code, _, err = cli(capsys, "show", "nope")
    assert code == 2 and "no cache pack with a key starting 'nope'" in err


def test_this_interpreter_s_pack_is_current_and_prune_stale_keeps_it(capsys: pytest.CaptureFixture[str]) -> None:
    from tflaunch.core.run.interpreters.stack import current_stack

    mine = make_pack(current_stack(sys.executable))
    make_pack(GONE)
    code, out, _ = cli(capsys, "prune", "--stale", "--dry-run")
    assert code == 0 and "would remove " + GONE.key in out and mine.name not in out
    assert caches.pack_folder(GONE).exists()
    code, out, _ = cli(capsys, "prune", "--stale")
    assert not caches.pack_folder(GONE).exists() and mine.exists()
    code, _, err = cli(capsys, "prune")
    assert code == 2 and "--stale, --older-than DAYS, or their keys" in err


def test_a_pack_exported_imports_whole_on_another_machine(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = make_pack(GONE, 2)
    archive = tmp_path / "pack.tar.gz"
    assert cli(capsys, "export", GONE.key, str(archive))[0] == 0
    other = tmp_path / "node"
    target, notes = import_pack(archive, other)
    assert notes == [] and target == other / GONE.key
    assert sorted(cache_pack.entries(target)) == sorted(cache_pack.entries(folder))
    meta = cache_pack.read_meta(target)
    assert meta is not None and meta["key"] == GONE.to_dict() and meta["runs"] == 1
    assert cache_pack.damaged(target, meta) == []


def _archive(path: Path, files: dict[str, bytes], links: tuple[str, ...] = ()) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    return path


def test_the_command_line_names_the_archive_it_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tar")
    code, _, err = cli(capsys, "import", str(junk))
    assert code == 2 and f"{junk} is not a cache pack archive" in err and "tflaunch cache export" in err


def test_an_archive_is_checked_before_anything_is_written(tmp_path: Path) -> None:
    meta = json.dumps({**cache_pack.new_meta(GONE.to_dict())}).encode()
    root = tmp_path / "packs"
    bad = {
        "link": _archive(tmp_path / "a.tar.gz", {f"{GONE.key}/pack.json": meta}, (f"{GONE.key}/xla/e.pb",)),
        "outside": _archive(tmp_path / "b.tar.gz", {f"{GONE.key}/pack.json": meta, "../evil.pb": ENTRY}),
        "wrong key": _archive(tmp_path / "c.tar.gz", {"0123456789abcdef/pack.json": meta}),
        "no key": _archive(tmp_path / "d.tar.gz", {f"{GONE.key}/xla/e.pb": ENTRY}),
    }
    for why, archive in bad.items():
        with pytest.raises(PackArchiveError):
            import_pack(archive, root)
        assert not any(root.rglob("*.pb")), why
    cut = _archive(tmp_path / "e.tar.gz", {f"{GONE.key}/pack.json": meta, f"{GONE.key}/xla/a.pb": ENTRY,
                                          f"{GONE.key}/xla/b.pb": ENTRY[:-3]})
    target, notes = import_pack(cut, root)
    assert list(cache_pack.entries(target)) == ["a.pb"] and notes == ["Left out xla/b.pb: not a whole XLA cache entry."]
