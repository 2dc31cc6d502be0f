"""import_ahead: after the first paint, what a first run or a tab's first open will import,
one module at a time from the event loop, so that neither waits for it.

The first frame leaves these out (tests/gui/test_first_frame_imports.py): the run record,
the protocol parser and their payload types (some 70 ms), the tabs' own modules and the
engine. Left to the first click, they made History's first open 180 ms where it was 90 ms
and Compare's 205 ms where it was 140 ms (bench_tab_open); imported ahead, History opens in
77 ms, Compare 84 ms, Sweep 141 ms (it was 318 ms). Each is imported in its own turn of the
event loop, so a click is never held for more than one of them (at most some 40 ms here).
"""

from __future__ import annotations

import importlib

from PySide6.QtCore import QObject, QTimer

# In the order they are wanted: a run first, then the tabs as a user meets them. The record
# comes in three steps (its payload types, its data, its words): at once it held the loop 60-80 ms.
AHEAD = ("tflaunch.core.run.events", "tflaunch.core.run.record_data", "tflaunch.core.run.record",
         "tflaunch.core.store.rows", "tflaunch.core.run.session",
         "tflaunch.core.run.driver", "tflaunch.gui.adapters.probe_process", "tflaunch.gui.history.history_view",
         "tflaunch.gui.compare.compare_view", "tflaunch.gui.profiles.profiles_view",
         "tflaunch.gui.sweep.sweep_view", "tflaunch.gui.advisor.advisor_view")


def import_ahead(owner: QObject, names: tuple[str, ...] = AHEAD) -> None:
    """Import `names` in turn, each on its own turn of `owner`'s event loop (stopped with it)."""
    pending = list(names)

    def step() -> None:
        if pending:
            importlib.import_module(pending.pop(0))
            QTimer.singleShot(0, owner, step)

    QTimer.singleShot(0, owner, step)
