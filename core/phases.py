"""The start-up phases: the vocabulary every part of tflaunch shares.

The probe emits these names (it spells them out itself, since it must run where tflaunch
is not installed; the model tests check it reports every one); the parser, run records,
CLI table and GUI rows all key on them.
"""

from __future__ import annotations

PHASES: tuple[str, ...] = ("spawn", "import", "devices", "load", "trace", "first", "steady")

# Time-to-ready stops when the model has answered once; steady state is measured after.
READY_PHASES: tuple[str, ...] = PHASES[:-1]

# Time to ready spent between phases (generating inputs, Python between steps). Not a
# phase, since no one reports it: it is what wall time leaves over. Tables and charts
# show it as its own row, after the phases it counts with and before steady state.
OTHER = "other"
OTHER_LABEL = "Other (between phases)"
TIMELINE_ROWS: tuple[str, ...] = (*READY_PHASES, OTHER, PHASES[-1])

LABELS: dict[str, str] = {
    "spawn": "Spawn",
    "import": "Import",
    "devices": "Devices",
    "load": "Load",
    "trace": "Trace",
    "first": "First inference",
    "steady": "Steady state",
    "script": "Script",  # a user's own script launched with a profile: one span, no phases
}

DESCRIPTIONS: dict[str, str] = {
    "spawn": "Interpreter start-up: from the OS's process start to the probe's first line.",
    "import": "import tensorflow (and keras).",
    "devices": "Apply threads, XLA, visible GPUs, memory growth and limits; initialise devices.",
    "load": "Read the model: SavedModel, .keras, .h5 or a built-in sample built from code.",
    "trace": "Build the callable graph (concrete function, XLA compile when enabled).",
    "first": "The first inference on generated inputs matching the model's signature.",
    "steady": "Further inferences: median and spread of latency.",
    "script": "A script launched with these settings; it reports no phases of its own.",
}
