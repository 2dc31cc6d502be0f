"""A failure's one-line reason: the phase, the model, the cause, and what to try next.

TensorFlow's own messages run to many lines of graph context; the user needs the first
line of the cause and, for a failure after load, the inputs it was fed, since a shape the
model cannot take is the usual reason there.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..failure import first_line
from .input_shapes import DEFAULTS_HELP
from .input_values import Fed

SHAPE_WORDS = ("shape", "Shape", "dimension", "Dimension", "size would be negative", "incompatible",
               "Incompatible", "rank", "ConcatOp", "Matrix size", "depth", "empty output")


def explain(exc: BaseException, config: Dict[str, Any], fed: Optional[List[Fed]]) -> str:
    # The phase is the failure's own field, and the headline says it first.
    message = f"{config.get('model', 'the model')}: {type(exc).__name__}: {first_line(exc)}"
    if not fed:
        return message
    inputs = ", ".join(f.text() for f in fed)
    if any(word in str(exc) for word in SHAPE_WORDS):
        assumed = [f.name for f in fed if f.assumed]
        advice = (f"The model cannot run on these inputs: {inputs}. "
                  + (f"The shape of {', '.join(assumed)} was assumed ({DEFAULTS_HELP}). " if assumed else "")
                  + "Set the shapes it takes with --input NAME=D1xD2... (without the batch dimension).")
        return f"{message}. {advice}"
    return f"{message}. Inputs fed: {inputs}."
