"""Colours shared by the views, chosen to stay apart for colour-blind readers and in print."""

from __future__ import annotations

# Okabe–Ito palette, one colour per phase.
PHASE_COLORS: dict[str, str] = {
    "spawn": "#999999",
    "import": "#E69F00",
    "devices": "#56B4E9",
    "load": "#009E73",
    "trace": "#CC79A7",
    "first": "#0072B2",
    "steady": "#D55E00",
    "script": "#6a5acd",
    "other": "#c7c7c7",  # time between phases: a neutral grey lighter than spawn
}

STATE_COLORS: dict[str, str] = {
    "waiting": "#7a7a7a",
    "running": "#0b57d0",
    "done": "#146c2e",
    "failed": "#b3261e",
    "cancelled": "#8a5a00",
}

RSS_COLOR = "#0b57d0"
PEAK_COLOR = "#b3261e"
ERROR_COLOR = "#b3261e"  # the reason next to a setting that cannot be used

# How a run stands (RunStatus values), in the same colours as phase states.
STATUS_COLORS: dict[str, str] = {
    "running": STATE_COLORS["running"],
    "ok": STATE_COLORS["done"],
    "failed": STATE_COLORS["failed"],
    "timed out": STATE_COLORS["failed"],
    "cancelled": STATE_COLORS["cancelled"],
    "interrupted": STATE_COLORS["cancelled"],
    "warning": "#9a5b00",  # ready, but on an assumption (an input shape nobody set)
}
