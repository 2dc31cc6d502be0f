"""mark(NAME): a point, or with `with`, a span of your program's start that tflaunch shows.

tflaunch puts this module on the path of every program it launches. Where tflaunch is not
there, the two-line guard in your program makes marks cost nothing:

    try:
        from tflaunch_mark import mark
    except ImportError:  # run without tflaunch
        def mark(name): import contextlib; return contextlib.nullcontext()

    mark("config_read")                 # a point: --until mark:config_read stops here
    with mark("restore"):                # a span: shown as its own phase, "Restore"
        restore_weights()

Names are lowercase words (letters, digits, _; 40 at most); others are made so, and a
built-in phase's name (data, load, compile...) becomes mark_data and so on. Standard
library only: it runs in your interpreter, where tflaunch may be absent.
"""

import re
import sys
import time

__all__ = ["mark"]


def _observer():
    module = sys.modules.get("tflaunch_probe.observer.observe")
    return module.observer() if module is not None else None


# The phases tflaunch observes itself: a span of yours by one of these names is kept apart
# as mark_NAME (tflaunch.core.phases.mark_name is the same rule, for --until mark:NAME).
_BUILT_IN = ("spawn", "import", "devices", "load", "build", "compile", "data", "trace", "first_step", "first",
             "steady", "retraces", "other")


def _name(name):
    text = re.sub(r"[^a-z0-9_]+", "_", str(name).strip().lower()).strip("_")[:40] or "mark"
    text = text if text[0].isalpha() else ("m_" + text)[:40]
    return ("mark_" + text)[:40] if text in _BUILT_IN else text


class mark:  # noqa: N801 (used as a function: mark("name"))
    """A point now; used with `with`, also a span from here to the block's end."""

    def __init__(self, name):
        self.name = _name(name)
        self.start = time.time()
        observer = _observer()
        if observer is not None:
            observer.mark(self.name)

    def __enter__(self):
        self.start = time.time()
        return self

    def __exit__(self, *exc):
        observer = _observer()
        if observer is not None:
            observer.mark_span(self.name, self.start, time.time())
        return False
