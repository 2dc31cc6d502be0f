"""The one exception the probe raises on purpose, and the line of any other that says why."""

import re


class ProbeFailure(Exception):  # noqa: N818 (the protocol's name for it, used everywhere)
    """A failure with a stable kind and a message that tells the user what to do."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


def first_line(exc: BaseException, limit: int = 300) -> str:
    """The line of an exception that says what went wrong.

    TensorFlow's op errors open with "Graph execution error:" and the Python stack of the
    failing node; the cause is the last line before the "[[{{node ...}}]]" trailer.
    """
    text = str(getattr(exc, "message", None) or exc)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if lines and (lines[0].startswith("Graph execution error") or "Detected at node" in text):
        causes = [line for line in lines if not line.startswith(("[[", "File ", "Detected at node", "Graph execution"))
                  and not line.endswith(":")]
        lines = causes[-1:] or lines
    line = re.sub(r"\s*\[Op:[^\]]*\]$", "", lines[0]) if lines else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"
