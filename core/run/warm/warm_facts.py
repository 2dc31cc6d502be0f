"""How a launch asked to start warm did start, as its warm client said on stderr.

The session builds it from the client's lines (warm_start.py's COLD_LINE and SERVER_LINE); the
history stores it as to_dict() and reads it back leniently (store/rows.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class WarmStart:
    """A launch asked to start warm: why it started cold, and whether it started the warm
    server itself (and waited for its import). A launch not asked to start warm has none."""

    cold_because: str | None = None  # the client's reason, when it started cold
    server_started: bool = False  # no server was running: this launch started one and waited for it
    server_import_s: float | None = None  # that server's import, when the client said how long

    def to_dict(self) -> dict[str, Any]:
        """As the history stores it, in the order the client says it (the server's start
        comes before a cold start's reason, whose exec ends the client)."""
        return {"asked": True,
                **({"server_import_s": self.server_import_s} if self.server_started else {}),
                **({"cold_because": self.cold_because} if self.cold_because is not None else {})}
