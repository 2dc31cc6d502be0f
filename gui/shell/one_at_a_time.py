"""One measurement at a time across the Run tab, scripts, Sweep and the Advisor.

Two probes at once share the CPU, the disk and the GPU: each disturbs the other's figures
and nothing would say so (Ctrl+R while the Advisor examined started a run beside one of
its A/B arms). So whatever measures, every other start control is disabled with a tooltip
that says what runs, and a start asked for anyway (a shortcut) is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .window_host import WindowHost


class OneAtATime:
    def __init__(self, window: WindowHost) -> None:
        self.window = window

    def busy_with(self) -> str | None:
        """What measures now, in words, or None."""
        w = self.window
        if w.runner.running:
            record = w.runner.record
            return f"a run of {record.config.subject} is measuring" if record is not None else "a run is measuring"
        if w.sweeper.running:
            return "a sweep is running"
        if w.tabs.is_built("Advisor") and w.advisor_view.running:
            return "the Advisor is examining"
        return None

    def refuse(self, say: Callable[[str], None]) -> bool:
        """True, with the reason said, when another measurement runs."""
        busy = self.busy_with()
        if busy:
            say(f"Cannot start while {busy}: one measurement at a time (Esc cancels it).")
        return busy is not None

    def follow(self) -> None:
        """Every start control as things stand: disabled, saying what runs, or enabled."""
        w, busy = self.window, self.busy_with()
        w.window_actions.set_busy(busy is not None, busy, w.panel.not_runnable)
        if w.tabs.is_built("Sweep") and not w.sweeper.running:
            w.sweep_view.hold(busy)
        if w.tabs.is_built("Advisor"):
            w.advisor_view.hold(None if w.advisor_view.running else busy)
