"""An anatomy run's profile kept where TensorBoard's Profile tab finds it:
LOGDIR/plugins/profile/RUN/HOST.xplane.pb, the layout `tf.profiler.experimental.start(LOGDIR)`
writes and the profile plugin reads (each RUN folder is a run in its list).

The probe writes the profile into a folder the launcher gave (probe/anatomy.KEEP_ENV) and
leaves it; this copies the XPlane file into the user's log folder under a run name that
starts with the launch time (the plugin lists runs by name) and ends with the run's id in
History, so the two can be found from each other.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

PROFILE_DIR = ("plugins", "profile")


class KeepError(Exception):
    """The profile could not be kept: the message names the file or folder and what to do."""


def run_name(run_id: int | None, launched_at: float) -> str:
    stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(launched_at))
    return f"{stamp}_tflaunch_run_{run_id}" if run_id is not None else f"{stamp}_tflaunch"


def written_profile(folder: Path) -> Path | None:
    """The XPlane file the profiler wrote below `folder` (its newest, if several)."""
    files = sorted(folder.glob("/".join((*PROFILE_DIR, "*", "*.xplane.pb"))), key=lambda p: p.stat().st_mtime)
    return files[-1] if files else None


def keep_profile(written: Path, logdir: Path, run_id: int | None, launched_at: float) -> Path:
    """Copy the profiler's folder's XPlane file into `logdir`'s layout (the app may keep the
    same run's profile in a second folder); where it now is."""
    found = written_profile(written)
    if found is None:
        raise KeepError(f"the anatomy run's profiler wrote no .xplane.pb under {written}; nothing to keep")
    target = logdir.joinpath(*PROFILE_DIR, run_name(run_id, launched_at), found.name)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found, target)
    except OSError as exc:
        raise KeepError(f"cannot keep the profile in {target.parent} ({exc.strerror or exc}); give another "
                        "--tensorboard folder") from None
    return target
