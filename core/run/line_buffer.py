"""Lines out of a child's pipe: bytes split into complete, decoded, capped lines."""

from __future__ import annotations


class LineBuffer:
    """Splits a byte stream into complete lines.

    Chunks from a pipe can end mid-line or mid-way through a UTF-8 character; this keeps
    the tail until its line is complete (lines are split as bytes and decoded whole, and a
    newline byte is never part of a multi-byte character). Undecodable bytes become
    U+FFFD instead of raising. A line longer than ``max_line`` bytes is cut once: its
    first ``max_line`` bytes and a note of how much was dropped, the rest discarded up to
    its newline, so a runaway writer costs neither memory nor a flood of pieces.
    """

    def __init__(self, max_line: int = 1 << 20) -> None:
        self._max_line = max_line
        self._parts: list[bytes] = []  # the line so far, joined once when it ends
        self._kept = 0
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[str]:
        *complete, rest = chunk.split(b"\n")
        lines = []
        for piece in complete:
            self._keep(piece)
            lines.append(self._take())
        self._keep(rest)
        return lines

    def flush(self) -> list[str]:
        """Whatever is left when the stream closes (a last line without newline)."""
        line = self._take()
        return [line] if line else []

    def _keep(self, piece: bytes) -> None:
        room = self._max_line - self._kept
        if room > 0 and piece:
            self._parts.append(piece[:room])
            self._kept += min(room, len(piece))
        self._dropped += max(0, len(piece) - max(room, 0))

    def _take(self) -> str:
        line = b"".join(self._parts).decode("utf-8", errors="replace").rstrip("\r")
        if self._dropped:
            line += f" … [line cut: {self._dropped} more bytes]"
        self._parts, self._kept, self._dropped = [], 0, 0
        return line
