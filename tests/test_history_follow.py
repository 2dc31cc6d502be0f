"""The History tab follows its file: a run another process stores appears within a second and
one it deletes goes, without listing every run again (RunChanges, core); this window's own
run is added the same way when the window refreshes the tab after it."""

from __future__ import annotations

import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tflaunch.core.paths import history_path
from tflaunch.core.run.record import RunRecord, RunStatus
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.store.history import History
from tflaunch.core.store.run_changes import RunChanges, TooManyChanges
from tflaunch.gui.history.history_listing import FIRST_ROWS
from tflaunch.gui.history.history_table import ID_ROLE, STATUS
from tflaunch.gui.history.history_view import HistoryView

from .big_history import NEWEST, big_history
from .builders import finished_record

RUNS = 300  # more than the tab lists at once: a full listing again would show as loading
REPO = Path(__file__).parent.parent
# Another process, as `tflaunch bench` or a second window is: stores a run, or deletes one.
OTHER = """
import sys
from pathlib import Path
from tflaunch.core.store.history import History
from tests.builders import finished_record
history = History(Path(sys.argv[1]))
if sys.argv[2] == "add":
    print(history.record(finished_record("from-a-terminal", at=float(sys.argv[3])), "cli"))
else:
    history.delete([int(sys.argv[3])])
history.close()
"""


def other_process(path: Path, action: str, value: float) -> str:
    done = subprocess.run([sys.executable, "-c", OTHER, str(path), action, str(value)], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


@pytest.fixture
def history_file() -> Path:
    assert RUNS > FIRST_ROWS
    return big_history(history_path(), RUNS)


def listed(view: HistoryView) -> set[int]:
    return {view.model.run_id(row) for row in range(view.model.rowCount())}


def listed_view(qtbot, history: History) -> tuple[HistoryView, list[str]]:
    """The tab with every run listed, and what would show it listed everything again."""
    view = HistoryView(history)
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: not view.loading, timeout=20_000)
    assert view.model.rowCount() == RUNS
    resets: list[str] = []
    view.model.modelReset.connect(lambda: resets.append("reset"))
    view.listing.rows_added.connect(lambda: view.loading and resets.append("loading"))
    return view, resets


def test_runs_another_process_stores_or_deletes_come_and_go_within_a_second(qtbot, history_file):
    with closing(History(history_file)) as history:
        view, resets = listed_view(qtbot, history)
        view.select_ids([7])
        new = int(other_process(history_file, "add", NEWEST + 60))
        qtbot.waitUntil(lambda: new in listed(view), timeout=1500)
        assert view.proxy.index(0, 0).data(ID_ROLE) == new, "the newest, on top"
        assert view.count.text() == f"{RUNS + 1} runs in {history_file}"
        other_process(history_file, "delete", 5)
        qtbot.waitUntil(lambda: 5 not in listed(view), timeout=1500)
        assert listed(view) == set(range(1, RUNS + 1)) - {5} | {new}
        assert view.selected_ids() == [7], "the selection stays"
        assert resets == [], "followed, not listed again"


def test_a_run_written_as_it_goes_is_listed_running_then_as_it_ended(qtbot, history_file):
    """A run stored from its start (the recorder's way), by another connection to the file."""
    with closing(History(history_file)) as history, closing(History(history_file)) as writer:
        view, resets = listed_view(qtbot, history)
        record = finished_record("live", at=NEWEST + 60)
        run_id = writer.begin(RunRecord(record.config, launched_at=record.launched_at), "cli")
        qtbot.waitUntil(lambda: run_id in listed(view), timeout=1500)
        assert view.model.item(0, STATUS).text() == "running"
        writer.finish(run_id, record)
        qtbot.waitUntil(lambda: view.model.item(0, STATUS).text() == "ok", timeout=1500)
        assert view.model.rowCount() == RUNS + 1 and resets == []


def test_this_windows_own_run_is_added_without_listing_every_run_again(qtbot, history_file):
    with closing(History(history_file)) as history:
        view, resets = listed_view(qtbot, history)
        view.select_ids([3])
        run_id = history.record(finished_record("mine", at=NEWEST + 60), "gui")  # as the window's recorder does
        view.refresh()  # what the window does when a run ends
        assert run_id in listed(view) and view.model.rowCount() == RUNS + 1, "at once"
        assert not view.loading and resets == [] and view.selected_ids() == [3]
        history.delete([run_id, 10])  # the Delete button's refresh, the same way
        view.refresh()
        assert listed(view) == set(range(1, RUNS + 1)) - {10} and resets == []


def test_refresh_lists_every_run_again_and_keeps_the_selection(qtbot, history_file):
    with closing(History(history_file)) as history:
        view, resets = listed_view(qtbot, history)
        view.select_ids([3, 250])
        assert view.reload_button.isVisibleTo(view) and view.reload_action.shortcut().toString() == "F5"
        view.reload_button.click()
        assert view.loading and resets
        qtbot.waitUntil(lambda: not view.loading, timeout=20_000)
        assert view.model.rowCount() == RUNS and sorted(view.selected_ids()) == [3, 250]


# -- the core: what changed, by id ---------------------------------------------------------------
def test_changes_are_found_by_id_and_read_only_when_something_was_written(history_file):
    changes = RunChanges(history_file)
    with closing(History(history_file)) as history:
        changes.note(history.list_runs())
        assert not changes.changed() and not changes.read(10)
        running = history.begin(RunRecord(LaunchConfig(model="live"), launched_at=NEWEST + 1), "cli")
        history.delete([2, 3])
        assert changes.changed()
        found = changes.read(10)
        assert [r.id for r in found.added] == [running] and found.removed == {2, 3} and not found.updated
        assert not changes.changed() and changes.listed == RUNS - 1
        history.finish(running, finished_record("live", at=NEWEST + 1))
        found = changes.read(10)
        assert not found.added and not found.removed
        assert [(r.id, r.status) for r in found.updated] == [(running, RunStatus.OK.value)]
        assert not changes.read(10), "an ended run is not read again"
        for i in range(3):
            history.record(finished_record("many", at=NEWEST + 10 + i), "cli")
        with pytest.raises(TooManyChanges):
            changes.read(2)
    changes.close()
