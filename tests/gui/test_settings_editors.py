"""The settings form is made from vocabulary.SETTINGS: an editor for every setting, offering
the table's choices in its words, within its bounds, starting at its default."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QComboBox, QSpinBox

from tflaunch.core.phases import UNTIL_POINTS
from tflaunch.core.settings.config import LaunchConfig
from tflaunch.core.settings.vocabulary import BY_NAME, SETTINGS, Kind
from tflaunch.gui.app import create_app
from tflaunch.gui.settings.settings_panel import SettingsPanel


@pytest.fixture
def panel(qtbot) -> SettingsPanel:
    create_app()
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    return panel


def _values(box: QComboBox) -> list[object]:
    return [box.itemData(i) for i in range(box.count())]


def test_every_setting_has_an_editor_at_its_default(panel):
    assert set(panel.editors) == set(BY_NAME)
    assert panel.form_config() == LaunchConfig()
    for setting in SETTINGS:
        assert panel.editors[setting.name].get() == setting.default, setting.name


def test_word_settings_offer_the_tables_choices_in_its_words(panel):
    for setting in SETTINGS:
        editor = panel.editors[setting.name]
        if setting.kind is Kind.TRISTATE:
            assert _values(editor.widget) == [None, True, False]
            assert editor.widget.itemText(0) == setting.unset[0]
        elif setting.kind is Kind.CHOICE and setting.name != "until":
            values = list(setting.choices)
            assert _values(editor.widget) == ([None, *values] if setting.default is None else values), setting.name
            for value in values:
                editor.put(value)
                assert editor.get() == value
                assert setting.choices[value] in editor.widget.currentText()
        elif setting.kind is Kind.COUNT:
            assert isinstance(editor.widget, QSpinBox)
            assert (editor.widget.minimum(), editor.widget.maximum()) == setting.bounds, setting.name
        if setting.name not in ("model", "program", "python", "visible_gpus", "inputs"):  # tooltips on their parts
            assert editor.widget.toolTip().startswith(setting.help), setting.name  # and why it is disabled


def test_until_offers_every_point_and_a_mark(panel):
    box = panel.editors["until"].widget
    assert [box.itemText(i) for i in range(box.count())] == [*UNTIL_POINTS, "mark:NAME"]
    panel.editors["until"].put("mark:Loaded Weights")
    assert panel.editors["until"].get() == "mark:loaded_weights"


def test_a_config_goes_through_the_form_unchanged(panel):
    config = LaunchConfig(page_cache="preloaded", call="eager", allocator="cuda_malloc_async", log_level=2,
                          onednn=False, cudnn_autotune=True, grappler="off", module_loading="eager",
                          cuda_cache="cold", intra=3, batch=1 << 20, steady=1_000_000, memory_limit_mb=4096,
                          timeout=30.0, imports=("a", "b.py"), signature="sig", xla_cache=True)
    panel.set_config(config)
    assert panel.form_config() == config
