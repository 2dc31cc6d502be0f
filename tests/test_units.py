"""Every figure reads with its unit, and the unit follows the printed value."""

from __future__ import annotations

import pytest

from tflaunch.core.units import format_bytes, format_duration


@pytest.mark.parametrize("seconds, text", [
    (None, "–"), (0.0000004, "0 µs"), (0.000999, "999 µs"), (0.0009996, "1.0 ms"), (0.0125, "12.5 ms"),
    (0.09999999, "100 ms"), (0.4567, "457 ms"), (0.9996, "1.00 s"), (1.234, "1.23 s"), (59.999, "1 min 0 s"),
    (125.4, "2 min 5 s"),
])
def test_durations(seconds, text):
    assert format_duration(seconds) == text


@pytest.mark.parametrize("size, text", [(None, "–"), (13 * 2**20, "13.0 MiB"), (3 * 2**30, "3.00 GiB")])
def test_sizes(size, text):
    assert format_bytes(size) == text
