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


# Parts of a phase the probe times separately (the devices phase on a machine with GPUs).
PART_LABELS: dict[str, str] = {
    "discovery": "driver and device discovery",
    "settings": "tf.config settings",
    "contexts": "contexts and allocators",
}
PART_DESCRIPTIONS: dict[str, str] = {
    "discovery": "The first list_physical_devices: the driver initialises and finds the GPUs (seconds without "
                 "persistence mode).",
    "settings": "The tf.config calls: threads, memory growth, memory limits.",
    "contexts": "The first list_logical_devices: a CUDA context and an allocator for every visible GPU; grows with "
                "the number of GPUs, and reserves memory unless growth or a limit is set.",
}
# The first call's time above a steady call: work done once (loading kernels, with CUDA's
# lazy module loading; cuDNN autotuning; XLA compiling), estimated from the two.
ONE_TIME = "one-time work in the first call"
