"""What the window does with runs kept in the history: show one in the Run tab, run its
settings again, compare several, save them as a profile. The window's part of the History
tab, apart from the window itself (as sweep_actions.py is its part of the Sweep tab)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tflaunch.core.report.subjects import subject_words
from tflaunch.core.run.status import RunStatus

if TYPE_CHECKING:
    from tflaunch.core.run.record import RunRecord

    from .window_host import WindowHost


class StoredRuns:
    def __init__(self, window: WindowHost) -> None:
        self.window = window

    def load(self, run_ids: Sequence[int]) -> list[RunRecord]:
        return self.window.history_view.load(list(run_ids))  # a run that cannot be read is said, not raised

    def show(self, run_id: int) -> None:
        w = self.window
        for record in self.load([run_id]):
            w.clear_status()  # it spoke of the run shown before (or of a refusal)
            w.run_view.show_record(record)
            w.log.show_record(record)
            w.tabs.setCurrentWidget(w.run_view)

    def rerun(self, run_id: int) -> None:
        for record in self.load([run_id]):
            self.window.use_config(record.config)
            self.window.start_run()

    def compare(self, run_ids: Sequence[int]) -> None:
        w = self.window
        w.compare_view.show_runs(self.load(run_ids))
        w.tabs.setCurrentWidget(w.compare_view)

    def save(self, run_ids: Sequence[int]) -> None:
        self.window.saver.ask_and_save_runs(self.load(run_ids))

    def compare_selected(self) -> None:
        """Compare from the menu or Ctrl+M: the runs selected in History, or how to select them."""
        w = self.window
        ids = w.history_view.selected_ids() if w.tabs.is_built("History") else []
        if len(ids) < 2:
            w.tabs.setCurrentWidget(w.history_view)
            w.say("Select two or more runs in History (Ctrl+2; Shift or Ctrl and click, or Shift+arrows), "
                  "then Compare (Ctrl+M).")
            return
        self.compare(ids)

    def save_shown_run(self) -> None:
        """Save as profile (Ctrl+S): the run the Run tab shows."""
        w = self.window
        record = w.run_view.record
        if record is None or record.status is not RunStatus.OK:
            w.say("Save as profile needs a finished, successful run.")
            return
        ident = f"#{record.history_id}" if record.history_id is not None else "the last run"
        what = f"the Run tab's run ({ident}, {subject_words(record)})"
        if w.tabs.currentWidget() is not w.run_view:  # Ctrl+S from another tab: say which run it is
            w.say(f"Saving {what} as a profile.")
        w.saver.ask_and_save_runs([record], what=what)
