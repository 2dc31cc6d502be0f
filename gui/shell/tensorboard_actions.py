"""Run ▸ Keep profile for TensorBoard…: the app's last anatomy run's TensorFlow profile copied
into a log folder TensorBoard's Profile tab reads (core/report/tensorboard_logdir.py), as
`tflaunch bench --anatomy --tensorboard LOGDIR` keeps it.

The app keeps the profile of its last anatomy run only (run_controller.RunController.profile):
the action works while the Run tab shows that run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMainWindow

from tflaunch.core.report.tensorboard_logdir import KeepError, keep_profile

from ..widgets import file_dialogs

if TYPE_CHECKING:
    from .window_host import WindowHost

NOTHING = ("No profile to keep: make an anatomy run (Run ▸ Anatomy of the first step, Ctrl+Shift+A) and keep it "
           "while the Run tab shows it.")


def keep_for_tensorboard(w: WindowHost, widget: QMainWindow) -> None:
    kept, record = w.runner.profile, w.run_view.record
    if kept is None or record is None or kept[0] is not record or record.finished_at is None:
        w.say(NOTHING)
        return
    if record.anatomy is None or record.anatomy.error is not None:
        w.say("This anatomy run gave no profile to keep (the Run tab says why).")
        return
    folder = file_dialogs.open_folder(widget, "review", "Keep the profile in a TensorBoard log folder")
    if not folder:
        return
    try:
        path = keep_profile(kept[1], Path(folder), record.history_id, record.launched_at)
    except KeepError as exc:
        w.say(f"Profile not kept: {exc}.")
        return
    w.say(f"Profile kept at {path}: tensorboard --logdir {folder}, then its Profile tab.")
