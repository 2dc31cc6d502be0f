"""`tflaunch check --baseline-commit REV`: the base commit checked out beside the working one
(`git worktree add --detach`), for as long as the check runs, then removed with its folder.

The program then runs from the same place inside the other checkout: `python train.py` in
repo/tools/ runs as repo-at-REV/tools/train.py.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

GIT_TIMEOUT_S = 300


class CheckoutError(Exception):
    """The base commit could not be checked out: git's own words, and what to do."""


def _git(folder: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S)
    except FileNotFoundError:
        raise CheckoutError("--baseline-commit needs git, which is not on PATH; check out the base commit "
                            "yourself and give --baseline-cwd DIR") from None
    except subprocess.TimeoutExpired:
        raise CheckoutError(f"git {args[0]} took more than {GIT_TIMEOUT_S} s; check out the base commit "
                            "yourself and give --baseline-cwd DIR") from None
    if done.returncode != 0:
        raise CheckoutError(f"git {' '.join(args)} failed in {folder}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


@contextmanager
def base_checkout(revision: str, folder: Path) -> Iterator[Path]:
    """The folder inside a checkout of `revision` that corresponds to `folder` in its own."""
    root = Path(_git(folder, "rev-parse", "--show-toplevel"))
    inside = folder.resolve().relative_to(root.resolve())
    commit = _git(folder, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    parent = Path(tempfile.mkdtemp(prefix="tflaunch-base-"))
    checkout = parent / "checkout"
    _git(folder, "worktree", "add", "--detach", str(checkout), commit)
    try:
        yield checkout / inside
    finally:
        try:
            _git(folder, "worktree", "remove", "--force", str(checkout))
        except CheckoutError:
            pass  # the folder goes below; git forgets the worktree at its next prune
        shutil.rmtree(parent, ignore_errors=True)
