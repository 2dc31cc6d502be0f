"""A model on a network file system, copied once to a local folder: the doctor's "local copy"
remedy measures a cold start from that copy against one from the network.

The copy is kept in tflaunch's cache, named by the source's path, size and time of change,
so a changed model is copied again and an unchanged one only once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from ...paths import cache_dir


def _signature(source: str) -> str:
    stat = os.stat(source)
    sizes = stat.st_size
    if os.path.isdir(source):
        for root, _, names in os.walk(source):
            for name in names:
                info = os.stat(os.path.join(root, name))
                sizes += info.st_size + int(info.st_mtime)
    text = f"{os.path.abspath(source)}|{sizes}|{int(stat.st_mtime)}"
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def local_copy(source: str, root: Path | None = None) -> str:
    """The path of a local copy of the model file or SavedModel folder `source`, copied now
    unless an unchanged one is there; OSError (a full disk, a file gone) as it comes."""
    source = os.path.abspath(os.path.expanduser(source))
    folder = (root or cache_dir() / "local-models") / _signature(source)
    target = folder / os.path.basename(source.rstrip(os.sep))
    if target.exists():
        return str(target)
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    if os.path.isdir(source):
        shutil.copytree(source, partial / target.name)
    else:
        shutil.copy2(source, partial / target.name)
    os.replace(partial, folder)  # whole or not at all: a copy cut short is never used
    return str(target)
