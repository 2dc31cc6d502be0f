"""A program's phase table: in time order, each phase that ran inside another indented under
it, and every row in view at the window's default size (issue 36: Build before Devices and
Data after First step with nothing saying why, the Steady row hidden at 1360x860)."""

from __future__ import annotations

from tflaunch.core.run import events as ev
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig

# (name, start, end) in seconds after launch, as a Keras program with tf.data reports them.
PHASES = [("spawn", 0.0, 0.05), ("import", 0.05, 1.5), ("build", 1.6, 2.4), ("devices", 1.7, 2.1),
          ("load", 2.42, 2.46), ("compile", 2.5, 2.6), ("first_step", 2.7, 4.0), ("data", 2.8, 3.1),
          ("retraces", 3.2, 3.3), ("first", 4.0, 4.1), ("steady", 4.1, 5.0)]


def program_record(at: float = 1000.0) -> RunRecord:
    record = RunRecord(LaunchConfig(program=("python", "train.py")), launched_at=at)
    record.apply(ev.Hello(at + 0.05, "spawn", 7, 0.05, "python"))
    events: list[tuple[float, ev.Event]] = []
    for name, start, end in PHASES:
        if name != "spawn":
            events.append((start, ev.PhaseStart(at + start, name)))
        latency = {"n": 10, "median": 0.1} if name == "steady" else {}
        events.append((end, ev.PhaseEnd(at + end, name, end - start, 100 << 20, 200 << 20, latency)))
    for _, event in sorted(events, key=lambda pair: pair[0]):
        record.apply(event)
    record.finish(0)
    return record


def test_nested_phases_are_indented_in_time_order_and_every_row_is_in_view(qtbot, window):
    record = program_record()
    window.run_view.show_record(record)
    qtbot.wait(50)
    table = window.run_view.phases
    labels = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert labels[:4] == ["Spawn", "Import", "Build", "└ Devices"], labels
    assert labels.index("└ Data") == labels.index("First step") + 1, labels
    assert "Ran inside Build" in table.item(labels.index("└ Devices"), 0).toolTip()
    assert not any(label.startswith("└") for label in labels if label.strip("└ ") in ("Import", "Compile"))
    # Every row in view: the table's area needs no scrolling at 1360x860.
    area = window.run_view._phases_area
    assert area.verticalScrollBar().maximum() == 0, (area.height(), table.content_height())
    steady = labels.index("Steady state")
    assert table.rowViewportPosition(steady) + table.rowHeight(steady) <= area.viewport().height()


def test_rows_that_arrive_live_stay_in_view(qtbot, window):
    """Rows added one by one as the program reports them: the table's area grows with them."""
    full = program_record()
    record = RunRecord(full.config, launched_at=full.launched_at)
    record.apply(ev.Hello(full.launched_at + 0.05, "spawn", 7, 0.05, "python"))
    window.run_view.begin(record)
    qtbot.wait(20)
    at = full.launched_at
    for name, start, end in PHASES[1:]:
        record.apply(ev.PhaseStart(at + start, name))
        record.apply(ev.PhaseEnd(at + end, name, end - start, 1 << 20, 2 << 20,
                                 {"n": 10, "median": 0.1} if name == "steady" else {}))
        window.run_view.refresh()
        qtbot.wait(10)
    area = window.run_view._phases_area
    assert area.verticalScrollBar().maximum() == 0, (area.height(), window.run_view.phases.content_height())
