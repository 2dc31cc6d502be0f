"""The run view gives the memory graph the room: the phase table and the waterfall are as
high as the table's rows and no higher, at every window size; the graph takes the rest."""

from __future__ import annotations

import pytest

from ..builders import finished_record


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000), (2560, 1440)])
def test_the_memory_graph_gets_what_the_table_does_not_need(qtbot, make_window, size):
    window = make_window(size=size)
    view = window.run_view
    view.show_record(finished_record())
    qtbot.wait(50)  # the splitters settle after the show
    table_area = view._phases_area
    needed = view.phases.content_height() + table_area.horizontalScrollBar().sizeHint().height()
    assert table_area.height() <= needed + 2, f"{table_area.height() - needed} px blank under the table at {size}"
    assert view.phases.content_height() <= table_area.viewport().height() + table_area.horizontalScrollBar().height(), \
        "every phase row is visible"
    graph = view.memory.height()
    assert graph >= 150, f"the memory graph has {graph} px at {size}"
    if size != (1024, 700):
        assert graph >= table_area.height(), f"the graph ({graph} px) < the table"
