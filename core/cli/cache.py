"""`tflaunch cache list|show|prune|export|import`: the cache packs kept here, what each holds
and did, and moving them between machines or cluster nodes.

A pack is found by its key (the folder's name, or any unique start of it). "This stack" marks
the packs this interpreter's runs use now; "stale" the packs of an interpreter whose
TensorFlow, build, driver or GPUs have changed since (its runs never read them again), and of
interpreters that are gone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from ..run.interpreters.stack import current_stack
from ..settings import cache_pack
from ..settings.caches import packs_root
from ..settings.pack_archive import PackArchiveError, export_pack, import_pack, stack_of
from ..units import format_bytes, format_duration
from .numbers import decimal

ACTIONS = ("list", "show", "prune", "export", "import")


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cache = sub.add_parser("cache", help="the cache packs (compiled XLA programs, autotune results, CUDA kernels) "
                                         "kept per stack: list, show, prune, export, import")
    cache.add_argument("action", choices=ACTIONS)
    cache.add_argument("target", nargs="*", help="show/export: a pack's key (or its start); export: then the "
                                                  "archive to write; import: the archive to read")
    cache.add_argument("--stale", action="store_true", help="prune: the packs no interpreter here can use any more")
    cache.add_argument("--older-than", type=decimal, metavar="DAYS", help="prune: the packs unused for DAYS days")
    cache.add_argument("--dry-run", action="store_true", help="prune: say what would be removed, remove nothing")
    cache.add_argument("--json", action="store_true", help="list/show: machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    try:
        return {"list": _list, "show": _show, "prune": _prune, "export": _export, "import": _import}[args.action](args)
    except (PackArchiveError, LookupError) as exc:
        print(f"tflaunch cache {args.action}: {exc}", file=sys.stderr)
        return 2


def packs() -> list[dict[str, Any]]:
    """Every pack here: its folder, key, size, entries, age and counts, and whether this
    stack uses it or it is stale."""
    root = packs_root()
    out = []
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        meta = cache_pack.read_meta(folder)
        if meta is None or not folder.is_dir():
            continue
        key: dict[str, Any] = meta["key"] if isinstance(meta.get("key"), dict) else {}
        state, why = _standing(key)
        out.append({"key": folder.name, "folder": str(folder), "stack": key, "bytes": cache_pack.size_of(folder),
                    "entries": len(cache_pack.entries(folder)), "created": meta.get("created"),
                    "used": meta.get("used"), "runs": meta.get("runs", 0), "hits": meta.get("hits", 0),
                    "misses": meta.get("misses", 0), "state": state, "why": why})
    return out


def _standing(key: dict[str, Any]) -> tuple[str, str]:
    """("current" | "stale" | "other", why): whether the interpreter that filled it still has this stack."""
    python = key.get("python")
    if not isinstance(python, str) or not os.path.exists(python):
        return "stale", f"its interpreter {python} is gone"
    now = current_stack(python).to_dict()
    changed = [f"{name} {key.get(name)} → {now.get(name)}" for name in ("tensorflow", "build", "driver", "gpus",
                                                                        "capabilities")
               if key.get(name) != now.get(name)]
    return ("stale", "; ".join(changed)) if changed else ("current", "")


def _find(prefix: str) -> dict[str, Any]:
    found = [p for p in packs() if p["key"].startswith(prefix)]
    if len(found) != 1:
        raise LookupError(f"{'no' if not found else str(len(found))} cache pack{'s' if found else ''} "
                          f"with a key starting {prefix!r}; `tflaunch cache list` names them.")
    return found[0]


def _age(at: Any) -> str:
    return "never" if not isinstance(at, (int, float)) else f"{format_duration(max(time.time() - at, 0))} ago"


def _list(args: argparse.Namespace) -> int:
    found = packs()
    if args.json:
        print(json.dumps({"root": str(packs_root()), "packs": found}, indent=2))
        return 0
    if not found:
        print(f"no cache pack in {packs_root()}; a run with --xla-cache (or --cuda-cache warm) fills one")
        return 0
    for p in found:
        stack = p["stack"]
        gpus = ", ".join(stack.get("gpus") or []) or "no GPU"
        flags = " ".join(stack.get("xla_flags") or []) or "no XLA flags"
        mark = {"current": "this stack", "stale": f"stale: {p['why']}"}.get(p["state"], p["state"])
        print(f"{p['key']}  {format_bytes(p['bytes'])}  {p['entries']} XLA programs  TensorFlow "
              f"{stack.get('tensorflow')} ({stack.get('build')})  {gpus}  {flags}  created {_age(p['created'])}, "
              f"used {_age(p['used'])}  {p['runs']} runs, {p['hits']} hits, {p['misses']} misses  [{mark}]")
    return 0


def _show(args: argparse.Namespace) -> int:
    if len(args.target) != 1:
        raise LookupError("show takes one key: `tflaunch cache show KEY`")
    pack = _find(args.target[0])
    entries = cache_pack.entries(Path(pack["folder"]))
    if args.json:
        print(json.dumps({**pack, "xla_entries": {n: st.st_size for n, st in entries.items()}}, indent=2))
        return 0
    print(f"pack {pack['key']} in {pack['folder']}")
    for name, value in pack["stack"].items():
        print(f"  {name}: {' '.join(value) if isinstance(value, list) else value}")
    print(f"  size {format_bytes(pack['bytes'])}; created {_age(pack['created'])}, used {_age(pack['used'])}; "
          f"{pack['runs']} runs, {pack['hits']} hits, {pack['misses']} misses; {pack['state']}"
          f"{': ' + pack['why'] if pack['why'] else ''}")
    for name, st in sorted(entries.items()):
        print(f"  {name}  {format_bytes(st.st_size)}")
    return 0


def _prune(args: argparse.Namespace) -> int:
    if not (args.stale or args.older_than is not None or args.target):
        raise LookupError("say which packs: --stale, --older-than DAYS, or their keys")
    chosen = [p for p in packs() if (args.stale and p["state"] == "stale")
              or (args.older_than is not None and time.time() - (p["used"] or p["created"] or 0) > args.older_than
                  * 86400) or any(p["key"].startswith(k) for k in args.target)]
    freed = 0
    for p in chosen:
        freed += p["bytes"]
        if not args.dry_run:
            shutil.rmtree(p["folder"], ignore_errors=True)
        print(f"{'would remove' if args.dry_run else 'removed'} {p['key']} ({format_bytes(p['bytes'])})"
              f"{': ' + p['why'] if p['why'] else ''}")
    print(f"{len(chosen)} pack{'s' if len(chosen) != 1 else ''}, {format_bytes(freed)}"
          f"{' would be freed' if args.dry_run else ' freed'}")
    return 0


def _export(args: argparse.Namespace) -> int:
    if len(args.target) != 2:
        raise LookupError("export takes a key and a file: `tflaunch cache export KEY pack.tar.gz`")
    pack = _find(args.target[0])
    size = export_pack(Path(pack["folder"]), Path(args.target[1]))
    print(f"exported {pack['key']} ({pack['entries']} XLA programs) to {args.target[1]} ({format_bytes(size)})")
    return 0


def _import(args: argparse.Namespace) -> int:
    if len(args.target) != 1:
        raise LookupError("import takes one archive: `tflaunch cache import pack.tar.gz`")
    folder, notes = import_pack(Path(args.target[0]))
    for note in notes:
        print(f"tflaunch: {note}", file=sys.stderr)
    stack = stack_of((cache_pack.read_meta(folder) or {}).get("key"))
    state, why = _standing(stack.to_dict()) if stack is not None else ("stale", "no key")
    print(f"imported {folder.name} into {folder} ({len(cache_pack.entries(folder))} XLA programs); "
          + ("runs of this stack read it" if state == "current" else f"not this machine's stack ({why}): "
             "runs here will not read it"))
    return 0
