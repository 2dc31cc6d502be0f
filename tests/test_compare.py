"""Comparison arithmetic: differences, ratios, and the settings that differ."""

from __future__ import annotations

import pytest

from tflaunch.core.report.compare import Delta, deltas, differing_settings
from tflaunch.core.settings.config import LaunchConfig

from .builders import finished_record


def test_deltas_against_the_chosen_baseline():
    slow, fast = finished_record(ready_s=2.0), finished_record(ready_s=1.0, intra=2)
    table = deltas([slow, fast], baseline=0)
    assert table[0]["load"].difference == 0
    assert table[1]["load"].difference == pytest.approx(-0.2)
    assert table[1]["load"].ratio == pytest.approx(2.0)
    assert table[1]["ready"].ratio == pytest.approx(2.02 / 1.02)
    assert deltas([slow, fast], baseline=1)[0]["load"].ratio == pytest.approx(0.5)


def test_delta_text_has_units_and_direction():
    assert Delta(1.0, 2.0).describe() == "1.00 s (−1.00 s, 2.00× faster)"
    assert Delta(0.3, 0.2).describe() == "300 ms (+100 ms, 1.50× slower)"
    assert Delta(None, 2.0).describe() == "–"


def test_differing_settings():
    configs = [LaunchConfig(intra=1), LaunchConfig(intra=2, jit_compile=True), LaunchConfig(intra=1)]
    assert differing_settings(configs) == ["intra", "jit_compile"]
    assert differing_settings([LaunchConfig(), LaunchConfig()]) == []
