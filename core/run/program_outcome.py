"""How a program run ends, in words: ready, stopped at ready, or where it stopped short.

A model run ends when the probe says so; a program run ends where the user said
(--until): at its first step, its first inference, a mark of its own, or its exit. Reaching
that point is success whether the program then exits or tflaunch stops it; anything else
names the last phase the program reached, so the user knows how far it got.
"""

from __future__ import annotations

from ..phases import FIRST, FIRST_STEP, UNTIL_PHASE, label
from ..settings.vocabulary import UNTIL_WORDS


def until_words(until: str) -> str:
    """--until as a sentence says it: "its first training step", "its mark restore"."""
    return UNTIL_WORDS.get(until) or f"its mark {until.removeprefix('mark:')}"


# The observer's refusal at an import it cannot watch (probe/observer/observe.py, cannot_observe).
NOT_OBSERVABLE = "not_observable"
# What the observer counts as a step and as an inference, for a program that showed neither.
_SEEN_AS = {
    "first_step": ("training step (--until first_step): it sees a step as fit or train_on_batch, or a Keras "
                   "optimizer's apply, eager or in a tf.function"),
    "first_inference": ("inference (--until first_inference): it sees predict, evaluate, a model called on real "
                        "tensors, a SavedModel's function, or the program's own tf.function called outside a "
                        "gradient tape"),
}


def unseen_words(until: str) -> str:
    """What tflaunch did not see in a program that ran to its end, and what it looks for."""
    return _SEEN_AS.get(until) or f"{until_words(until)} (--until)"


def reached_words(last: str | None, imported: bool) -> str:
    """What a program reached before it stopped short, for the failure's sentence."""
    if not imported:
        return "it never imported TensorFlow (tflaunch observes TensorFlow and Keras; marks still count)"
    return f"the last phase it reached was {label(last)}" if last else "it reported no phase"


def until_hint(until: str, reached: set[str], marks: list[str]) -> str:
    """What to measure instead when the program never got where --until said."""
    if UNTIL_PHASE.get(until) == FIRST and FIRST_STEP in reached:
        return " It trains: measure it to --until first_step (or exit)."
    if UNTIL_PHASE.get(until) == FIRST_STEP and FIRST in reached and FIRST_STEP not in reached:
        return " It made inferences but no training step: measure it to --until first_inference (or exit)."
    if until in _SEEN_AS:
        return (" If it trains or infers another way, mark that point (tflaunch_mark.mark(NAME), README: Marks) and "
                "measure to --until mark:NAME, or measure it to --until exit.")
    if until.startswith("mark:"):
        seen = ", ".join(sorted(set(marks))[:8])
        return (f" The marks it made: {seen}." if seen else
                " It made no mark at all: call tflaunch_mark.mark(NAME) in it (README: Marks), or choose another "
                "--until.")
    return ""


def last_error_line(stderr: list[str]) -> str | None:
    """The exception a Python program died of: the line after its last traceback's frames,
    if it printed one."""
    tail = stderr[-200:]
    # Anywhere in the line: a prompt the program left on stdout without a newline ("How many
    # epochs? ") runs into the traceback's first line when both streams share one pipe.
    starts = [i for i, line in enumerate(tail) if "Traceback (most recent call last)" in line]
    if not starts:
        return None
    # The first line after the frames: what follows it (a prompt stdout's buffer let out at
    # exit, a log line, the rest of a long message) is not the error.
    for line in tail[starts[-1] + 1:]:
        text = line.rstrip()
        if text and not line.startswith((" ", "\t")) and not text.startswith(("During handling", "The above")):
            return text[:300]
    return None


NO_STDIN = (" tflaunch gives the program no standard input (it reads /dev/null, as under nohup or a batch job):"
            " give it its answers as arguments, environment variables or a file.")


def stdin_hint(error: str | None) -> str:
    """What to say when a program died reading its standard input, which tflaunch does not give."""
    return NO_STDIN if error is not None and error.startswith("EOFError") else ""
