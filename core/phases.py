"""The start-up phases: one registry of the names every part of tflaunch shares.

A run has a subject: a model, which the probe loads and calls in its seven phases, or a
program, whose phases the launch hook observes as they happen. A record carries the
phases its subject reported, in order; a phase never reached is absent, never zero.

The vocabulary is open (as MLPerf's log keys or OpenTelemetry's span names): the names
below are *known* (a label, a description, a reserved colour and a rank that orders them
among each other); any other well-formed name (a user's mark, a phase a newer hook
reports) is data, shown with a stable colour from a disjoint palette. Looking a name up
never fails, so nothing a child sends can become a KeyError in a view.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

# The names the rest of tflaunch decides by: what it does with a phase is said here, by
# name, and nowhere else (tests/test_phase_names.py greps for the literals).
SPAWN = "spawn"  # the interpreter's start: measured from the OS's process start
IMPORT = "import"  # import tensorflow: a run without it never loaded TensorFlow
DEVICES = "devices"  # timed in parts on a machine with GPUs
TRACE = "trace"  # a model's callable built (tf.function traced), before its first call
FIRST = "first"  # the first inference: a model's ready point
FIRST_STEP = "first_step"  # the first training step: a program that has one trains
STEADY = "steady"  # further calls or steps: per call, after the ready point
RETRACES = "retraces"  # a count of traces, not a span of the start

# The probe's seven, in order (it spells them out itself, since it runs where tflaunch is
# not installed; the model tests check that it reports every one).
PHASES: tuple[str, ...] = ("spawn", "import", "devices", "load", "trace", "first", "steady")

# A model's time to ready stops when it has answered once; steady state is measured after.
MODEL_READY = FIRST

# Phases measured after the ready point, or not a span of the start at all: they count to
# no time to ready and are compared per call (steady) or as a count (retraces).
AFTER_READY: frozenset[str] = frozenset({STEADY, RETRACES})

# Reported with a duration but not as a span: retraces are a count and their total time,
# sent when steady state ends (the record gives them a start, its end minus the time, only
# to draw them). They cover no time of the start: "other" never leaves them out of its gaps.
NOT_SPANS: frozenset[str] = frozenset({RETRACES})

# Time to ready spent outside every phase (generating inputs, the program's own Python).
# Not a phase, since no one reports it: it is what wall time leaves over.
OTHER = "other"
OTHER_LABEL = "Other (between phases)"

# A program's phases as the launch hook observes them, in the order a training or serving
# script reaches them (a script reaches a subset, and `data` can run inside `first_step`).
PROGRAM_PHASES: tuple[str, ...] = ("spawn", "import", "devices", "load", "build", "compile", "data",
                                   "first_step", "first", "steady", "retraces")

# Where a program run stops being measured (--until); `exit` lets it run to its end.
UNTIL_POINTS: tuple[str, ...] = ("first_step", "first_inference", "exit")  # and mark:NAME
UNTIL_PHASE = {"first_step": "first_step", "first_inference": "first"}

# A name a child may report: lowercase words, as a Python identifier (marks too).
NAME = re.compile(r"[a-z][a-z0-9_]{0,39}\Z")  # \Z: `$` would take a trailing newline

_KNOWN: dict[str, tuple[str, str, str]] = {  # name: (label, colour, description)
    "spawn": ("Spawn", "#999999", "Interpreter start-up: from the OS's process start to the first line of Python "
                                  "tflaunch sees."),
    "import": ("Import", "#E69F00", "import tensorflow (and keras)."),
    "devices": ("Devices", "#56B4E9", "Apply threads, XLA, visible GPUs, memory growth and limits; initialise "
                                      "devices."),
    "load": ("Load", "#009E73", "Read the model: SavedModel, .keras, .h5, a checkpoint restore, or a sample built "
                                "from code."),
    "build": ("Build", "#999933", "The program builds its model: from its first Keras layer to the last model it "
                                "constructs before it moves on (compile, fit, a call, a load)."),
    "compile": ("Compile", "#CC6677", "model.compile: optimizer, loss and metrics (the train function is traced "
                                      "in the first step)."),
    "data": ("Data", "#DDCC77", "The first element out of a tf.data iterator the program made (the pipeline's "
                                "fill)."),
    "trace": ("Trace", "#CC79A7", "Build the callable graph (concrete function, XLA compile when enabled)."),
    "first_step": ("First step", "#7B4FC9", "The first training step, to its end: tracing the train function, "
                                            "creating optimizer slots, compiling, running it."),
    "first": ("First inference", "#0072B2", "The first inference: a model call, predict or signature call "
                                            "outside training."),
    "steady": ("Steady state", "#D55E00", "Further calls or steps: median and spread per call."),
    "retraces": ("Retraces", "#C2185B", "tf.function traces beyond each function's first: count and time."),
    OTHER: (OTHER_LABEL, "#c7c7c7", "Time to ready outside every phase (the program's own Python, generating "
                                    "inputs)."),
}
# Colours of names nobody registered (marks): apart from the reserved ones, stable per name
# by CRC-32 (never hash(), which Python salts per process), as trace viewers do.
GENERAL_COLOURS: tuple[str, ...] = ("#4477AA", "#66CCEE", "#228833", "#AA3377", "#0077BB", "#009988", "#EE3377",
                                    "#994455", "#BBCC33", "#77AADD")
_RANK = {name: i for i, name in enumerate(("spawn", "import", "devices", "load", "build", "compile", "data",
                                           "trace", "first_step", "first", OTHER, "steady", "retraces"))}


def mark_name(text: str) -> str:
    """A mark's name as the program's tflaunch_mark.mark makes it (the launch hook keeps its
    own copy of this rule: it runs where tflaunch is not installed): lowercase words of
    letters, digits and _, 40 at most; a built-in phase's name gets `mark_` before it, so a
    span of the program's own never merges with the phase tflaunch observes."""
    name = re.sub(r"[^a-z0-9_]+", "_", str(text).strip().lower()).strip("_")[:40] or "mark"
    if not name[0].isalpha():
        name = ("m_" + name)[:40]
    return f"mark_{name}"[:40] if name in _KNOWN else name


def normal_until(text: str) -> str:
    """--until as stored: mark:NAME with NAME as the program's mark() spells it."""
    text = str(text).strip()
    return f"mark:{mark_name(text[len('mark:'):])}" if text.startswith("mark:") else text


def known(name: str) -> bool:
    return name in _KNOWN


def label(name: str) -> str:
    """How people read a phase's name: "First step"; an unknown one as written."""
    return _KNOWN[name][0] if name in _KNOWN else name.replace("_", " ").capitalize()


def row_label(name: str) -> str:
    """A phase's label in a table's row: "other" in short ("Other"), its tooltip says the rest."""
    return "Other" if name == OTHER else label(name)


def description(name: str) -> str:
    return _KNOWN[name][2] if name in _KNOWN else "A span the program marked itself (tflaunch_mark.mark)."


def colour(name: str) -> str:
    """The phase's colour: reserved for a known name, stable by CRC-32 for any other."""
    if name in _KNOWN:
        return _KNOWN[name][1]
    return GENERAL_COLOURS[zlib.crc32(name.encode("utf-8")) % len(GENERAL_COLOURS)]


def rank(name: str) -> int:
    return _RANK.get(name, len(_RANK))


class _HasPhases(Protocol):
    @property
    def phase_order(self) -> list[str]: ...

    @property
    def expected_phases(self) -> tuple[str, ...]: ...


def merged_order(orders: Iterable[Sequence[str]]) -> list[str]:
    """One row order for several runs' phases: the union, each run's own order kept, known
    names placed by rank among each other and a run's own names after what precedes them."""
    rows: list[str] = []
    for order in orders:
        for i, name in enumerate(order):
            if name in rows:
                continue
            # After the row of its predecessor in this run (a model's `trace` then falls
            # between a program's `data` and `first_step`).
            at = rows.index(order[i - 1]) + 1 if i and order[i - 1] in rows else 0
            if known(name):  # before the first known row that ranks after it
                while at < len(rows) and not (known(rows[at]) and rank(rows[at]) > rank(name)):
                    at += 1
            else:  # right after its predecessor, after names other runs put there first
                while at < len(rows) and not known(rows[at]):
                    at += 1
            rows.insert(at, name)
    return rows


def timeline_rows(names: Sequence[str]) -> list[str]:
    """Rows with "other" where it counts: after the phases of the start, before steady state."""
    at = next((i for i, n in enumerate(names) if n in AFTER_READY), len(names))
    return [*names[:at], OTHER, *names[at:]]


def phase_rows(records: Iterable[_HasPhases]) -> list[str]:
    """The rows every table, chart and export shows for a set of runs (see merged_order):
    the phases each reached and, for a run still going, those it is still expected to
    report (shown as waiting). A finished run expects nothing: it has what it reached."""
    return merged_order(order for r in records for order in (r.phase_order, r.expected_phases))


def model_phases(call: str) -> tuple[str, ...]:
    """The phases the probe reports for a model called so (--call): no trace when it is
    called eagerly or through predict, since the probe traces nothing then."""
    return PHASES if call == "function" else tuple(p for p in PHASES if p != "trace")


def subject_phases(program: bool, call: str) -> tuple[str, ...]:
    """The phases of the start a subject can report: a model's by --call; for a program, the
    ones the launch hook observes (it reaches a subset, and may mark its own besides)."""
    names = PROGRAM_PHASES if program else model_phases(call)
    return tuple(name for name in names if name not in AFTER_READY)


def step_unit(names: Collection[str]) -> str:
    """What a run's steady state counts: training steps where it trained (a first step),
    else calls (a model's, or a program's inferences). Plural: add "s"."""
    return "step" if FIRST_STEP in names else "call"


def short_label(name: str) -> str:
    """A phase's label for a chart's axis, where long ones would run into each other."""
    return {OTHER: "Other", "first_step": "Step"}.get(name) or label(name).split()[0]


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
