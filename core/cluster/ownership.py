"""Who may write a sweep folder's parts: the rule every file a node runs or a merge reads
passes first.

A trial runs whatever its file names and a merge stores whatever a result says, so what
others can write is refused. "Others" is precise: the world bit (o+w) always refuses; the
group bit (g+w), the default under `umask 002` on clusters whose users each have a group
of their own, refuses only where the group has members besides the user, unless the sweep
names that group with `--shared-group` (a team that shares its sweeps on purpose). Every
refusal says which path and which bit, and what to do.
"""

from __future__ import annotations

import grp
import os
import pwd
import shlex
import stat
from functools import lru_cache
from pathlib import Path


class OwnershipError(Exception):
    """A part of the folder someone else may have written: the message names it, the bit
    or the owner, and what to do."""


def group_id(name: str) -> int:
    """The gid of `--shared-group NAME` (a name or a number); ValueError saying so."""
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        if name.isascii() and name.isdigit():
            return int(name)
        raise ValueError(f"--shared-group: no group {name!r} on this machine (`id` lists yours)") from None


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


@lru_cache(maxsize=16)
def others_in_group(gid: int, uid: int) -> tuple[str, ...]:
    """Users other than `uid` in group `gid`: its listed members and whoever has it as their
    own primary group (a user private group has none)."""
    me = _user_name(uid)
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:
        return ("(a group this machine does not know)",)
    members |= {p.pw_name for p in pwd.getpwall() if p.pw_gid == gid}
    return tuple(sorted(members - {me}))


def writers_problem(st: os.stat_result, shared_gid: int | None, group_owned_ok: bool = False) -> str | None:
    """Why someone besides the user may have written (or may write) what `st` describes;
    None when only the user, or the sweep's shared group, can. `group_owned_ok`: a file the
    sweep's shared group owns is accepted though another member made it (results, exits)."""
    me = os.getuid()
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != me and not (group_owned_ok and shared_gid is not None and st.st_gid == shared_gid):
        return f"owned by {_user_name(st.st_uid)}, not by you"
    if mode & 0o002:
        return f"anyone may write it (mode {mode:o}: the o+w bit)"
    if mode & 0o020 and st.st_gid != shared_gid:
        others = others_in_group(st.st_gid, me)
        if others:
            name = group_name(st.st_gid)
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
            return (f"group {name} may write it (mode {mode:o}: the g+w bit) and has members besides you ({shown}); "
                    f"if you share sweeps with that group on purpose, submit with --shared-group {name}")
    return None


def check_part(part: Path, shared_gid: int | None, group_owned_ok: bool = False) -> None:
    """OwnershipError when `part` fails the rule; a missing part is said by whoever reads it."""
    try:
        st = part.lstat()
    except OSError:
        return
    problem = writers_problem(st, shared_gid, group_owned_ok)
    if problem is not None:
        raise OwnershipError(refusal(part, problem))


def refusal(part: Path, problem: str) -> str:
    quoted = shlex.quote(str(part))
    return (f"{part}: {problem}, so a trial could run, or a merge store, what someone else wrote there. tflaunch "
            f"uses only what you (or the sweep's --shared-group) can write: `chmod go-w {quoted}` if it is "
            "yours, or submit the sweep again.")
