"""The probe protocol's version and the wall-clock range of its timestamps, which the
command line's JSON and the history's reader share with the parser (events.py) without
importing it and its payload types. The probe writes the same version (core/probe/channel.py:
it imports nothing of core/run, and a test holds the two equal)."""

from __future__ import annotations

PROTOCOL_VERSION = 1
EPOCH_RANGE = (0.0, 1e10)  # ts: 1970 to 2286, by the wall clock both processes share
