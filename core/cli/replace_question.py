"""Saving over a profile needs a yes, asked before the runs that would replace it.

bench --save-profile, sweep --save-winner and doctor --save-profile save at the end of
minutes of runs; a profile of that name may be one its user accepted and uses. So the
question comes first: on a terminal it is asked, in a script `--replace` is the yes, and
without it nothing runs. Even with the yes the replaced file is kept as a dated copy
(store.replaced_profiles).
"""

from __future__ import annotations

import argparse
import sys

from ..paths import profiles_dir
from ..safe_text import shown
from ..store.profiles import ProfileError, ProfileStore
from ..store.replaced_profiles import FOLDER
from .command_tools import refuse, say


def add_replace_argument(parser: argparse.ArgumentParser, option: str) -> None:
    parser.add_argument("--replace", action="store_true",
                        help=f"with {option}: replace a profile of that name (its file is kept as a dated copy in "
                             f"the profiles folder's {FOLDER}/); asked on a terminal without it")


def may_replace(name: str, replace: bool, as_json: bool) -> tuple[bool, int | None]:
    """(overwrite, None) when the save may go ahead (overwrite: the user said yes to replacing
    a profile of that name), or (False, exit status) when nothing must run."""
    store = ProfileStore(profiles_dir())
    try:  # a bad name or a folder that takes no file is said now, not after minutes of runs
        path = store.check_writable(name)
    except ProfileError as exc:
        return False, refuse("invalid_profile_name", str(exc), as_json)
    if not path.exists():
        return False, None
    kept = f"its file is kept as a dated copy in {shown(path.parent / FOLDER)}"
    if replace:
        say(f"the profile {name} ({shown(path)}) will be replaced when the runs are done; {kept}")
        return True, None
    if as_json or not sys.stdin.isatty():
        return False, refuse("profile_exists", f"a profile {name} exists already ({shown(path)}); nothing ran. "
                             f"Give --replace to replace it ({kept}), or choose another name.", as_json)
    try:
        answer = input(f"A profile {name} exists already ({shown(path)}). Replace it with the result of these runs "
                       f"({kept})? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return True, None
    say(f"nothing ran: the profile {name} is kept as it is. Choose another name, or answer yes to replace it.")
    return False, 1


def saved_line(name: str, path: object, store: ProfileStore) -> str:
    """What a save says: where it went, and where the profile it replaced was kept."""
    kept = f"; the profile it replaced is kept as {shown(store.kept_copy)}" if store.kept_copy else ""
    return f"saved profile {name} ({shown(path)}){kept}"
