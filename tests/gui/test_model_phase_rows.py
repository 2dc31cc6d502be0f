"""A model's phase rows are the phases it reached, as a program's are (issue 35): a finished
`--call eager` run showed "Trace: waiting" in the app's phase table while the CLI had no
Trace row and Compare "—". A running model still shows what is to come, as waiting."""

from __future__ import annotations

from tflaunch.core.phases import colour, label
from tflaunch.core.report.compare import time_rows
from tflaunch.core.report.table import run_table
from tflaunch.core.run import events as ev
from tflaunch.core.run.environment_facts import EnvironmentFacts
from tflaunch.core.run.model_facts import ModelFacts
from tflaunch.core.run.record import RunRecord
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.gui.plots.waterfall import Waterfall
from tflaunch.gui.run.phase_table import PhaseTable
from tflaunch.gui.widgets.palette import readable


def model_run(call: str, through: tuple[str, ...], at: float = 1000.0, finish: bool = True) -> RunRecord:
    """A model run fed the probe's events through `through`, 0.2 s each; finished cleanly."""
    record = RunRecord(LaunchConfig(model="sample:mlp", call=call), launched_at=at)
    record.apply(ev.Hello(at + 0.02, "spawn", 7, 0.02, "python"))
    record.apply(ev.PhaseEnd(at + 0.02, "spawn", 0.02, 10, 10))
    t = at + 0.02
    for name in through:
        record.apply(ev.PhaseStart(t, name))
        t += 0.2
        record.apply(ev.PhaseEnd(t, name, 0.2, 100, 200, {"n": 3, "median": 0.001} if name == "steady" else {}))
    if finish:
        record.apply(ev.Result(t, "steady", EnvironmentFacts({"tensorflow": "2.21.0"}),
                               ModelFacts({"name": "mlp", "params": 5})))
        record.finish(0)
    return record


def table_rows(table: PhaseTable) -> dict[str, str]:
    return {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}


def test_a_finished_eager_model_run_has_no_trace_row_anywhere(qtbot):
    record = model_run("eager", ("import", "devices", "load", "first", "steady"))
    assert record.status.value == "ok", record.headline
    table = PhaseTable()
    qtbot.addWidget(table)
    table.show_record(record)
    rows = table_rows(table)
    assert "Trace" not in rows and "waiting" not in rows.values(), rows
    assert list(rows) == ["Spawn", "Import", "Devices", "Load", "First inference", "Other", "Steady state"], rows
    waterfall = Waterfall()
    qtbot.addWidget(waterfall)
    waterfall.show_record(record)
    assert "trace" not in waterfall._order  # the chart's rows are the table's
    assert "Trace" not in run_table(record)  # the CLI's table
    assert "trace" not in time_rows([record, model_run("predict", ("import", "devices", "load", "first"))])


def test_a_running_model_shows_the_phases_still_to_come_as_waiting(qtbot):
    record = model_run("function", ("import",), finish=False)
    table = PhaseTable()
    qtbot.addWidget(table)
    table.show_record(record)
    rows = table_rows(table)
    assert rows["Trace"] == "waiting" and rows["First inference"] == "waiting" and rows["Import"] == "done", rows
    eager = model_run("eager", ("import",), finish=False)
    table.show_record(eager)
    assert "Trace" not in table_rows(table), "an eager call traces nothing: no trace to wait for"


def test_a_mark_row_is_coloured_in_the_phase_table_as_in_the_bands_and_waterfall(qtbot):
    at = 1000.0
    record = RunRecord(LaunchConfig(program=("python", "train.py")), launched_at=at)
    record.apply(ev.Hello(at + 0.05, "spawn", 7, 0.05, "python"))
    record.apply(ev.PhaseEnd(at + 0.05, "spawn", 0.05, 1, 1))
    record.apply(ev.PhaseStart(at + 0.1, "tokenizer"))
    record.apply(ev.PhaseEnd(at + 0.6, "tokenizer", 0.5, 1, 1))
    table = PhaseTable()
    qtbot.addWidget(table)
    table.show_record(record)
    row = [table.item(r, 0).text() for r in range(table.rowCount())].index(label("tokenizer"))
    assert table.item(row, 0).foreground().color() == readable(colour("tokenizer"))
