"""A profile replaced by a save is kept: a dated copy in the profiles folder's `replaced/`.

A save replaces a profile only after its user said yes (overwrite=True); even then the
file it replaces may be the only copy of settings someone accepted, so its bytes are kept
first, and nothing is replaced when they cannot be. The copies live in a subfolder, since
every *.toml directly in the profiles folder is a profile.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from ..probe.outside_files import UnreadableFileError, read_capped
from ..safe_text import shown
from .profile_error import ProfileError

FOLDER = "replaced"
MOST_BYTES = 1 << 20  # as profiles.MOST_BYTES: a profile larger than that is not read either


def keep_replaced(path: Path) -> Path:
    """Copy the profile at `path` to replaced/NAME.YYYY-MM-DDTHH-MM-SS.toml and return the
    copy's path; ProfileError when it cannot be copied (then it must not be replaced)."""
    folder = path.parent / FOLDER
    made = None  # the copy this call created, removed if it is cut short
    try:
        data = read_capped(str(path), MOST_BYTES, "The profile", within=str(path.parent))
        folder.mkdir(exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S")
        for n in range(1000):
            copy = folder / f"{path.stem}.{stamp}{f'.{n}' if n else ''}.toml"
            try:  # O_EXCL: never a copy over an older copy, nor through a link planted there
                fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except FileExistsError:
                continue
            made = copy
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            return copy
        raise OSError(f"{folder} holds 1000 copies of {path.stem} from this second")
    except OSError as exc:  # UnreadableFileError's message says it whole
        why = shown(exc, 400) if isinstance(exc, UnreadableFileError) or not exc.strerror else shown(exc.strerror)
        if made is not None:  # a copy cut short is no copy
            made.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty
        raise ProfileError(f"{shown(path)} was not replaced: a copy of it could not be kept in {shown(folder)} "
                            f"({why}). Free some space or fix that folder's permissions, then save again.") from None


def kept_copies(path: Path) -> list[Path]:
    """The dated copies kept of the profile at `path`, oldest first."""
    folder = path.parent / FOLDER
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(f"{path.stem}.*.toml") if p.name[len(path.stem) + 1:][:1].isdigit())
