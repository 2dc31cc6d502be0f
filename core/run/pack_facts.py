"""What a run's cache pack held and gave it, as the run ended (pack_hits.PackHits.facts).

The history keeps the description in the run's launch facts and its reader builds these
back from the stored dict (store/rows.py). They keep the description as it came, for
writing back unchanged, and give the figures tflaunch reads as typed attributes, each None
(or empty) where it is missing or not of its type: a row another program wrote is read,
not trusted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import read_as

KEPT_LINES = 12  # TensorFlow's lookup lines a run keeps
LINE_CAP = 300  # characters of each
FOLDER_CAP = 4096


def _count(value: Any) -> int | None:
    return read_as.count(value, below=1 << 62)


@dataclass(frozen=True)
class PackContents:
    """What the pack held at one moment."""

    entries: int | None = None  # XLA programs
    size: int | None = None  # bytes, everything in the pack

    @classmethod
    def of(cls, data: Any) -> PackContents:
        if not isinstance(data, Mapping):
            return cls()
        return cls(_count(data.get("entries")), _count(data.get("bytes")))


@dataclass(frozen=True)
class PackFacts:
    """A run's cache pack; `described` is what the run said of it, written back unchanged."""

    described: Mapping[str, Any] = field(default_factory=dict)
    folder: str | None = field(init=False)  # the pack's folder, named by its stack's key
    read_only: bool = field(init=False)
    before: PackContents = field(init=False)
    after: PackContents = field(init=False)
    hits: int | None = field(init=False)  # None: not known (no lookup lines, no read times)
    misses: int | None = field(init=False)
    lines: tuple[str, ...] = field(init=False)  # the first of TensorFlow's lines on hits and misses, cut

    def __post_init__(self) -> None:
        data = self.described
        folder, lines = data.get("folder"), data.get("lines")
        for name, value in (("folder", folder[:FOLDER_CAP] if isinstance(folder, str) else None),
                            ("read_only", data.get("read_only") is True),
                            ("before", PackContents.of(data.get("before"))),
                            ("after", PackContents.of(data.get("after"))),
                            ("hits", _count(data.get("hits"))), ("misses", _count(data.get("misses"))),
                            ("lines", tuple(n[:LINE_CAP] for n in lines[:KEPT_LINES] if isinstance(n, str))
                             if isinstance(lines, list) else ())):
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        """As the history and the JSON keep it: the description as the run said it."""
        return dict(self.described)
