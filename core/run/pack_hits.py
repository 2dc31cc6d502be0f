"""What a run's cache pack gave it: TensorFlow's own lines for each lookup, and the pack's
contents before and after.

With the pack, the child logs each lookup in the persistent XLA cache
(TF_CPP_VMODULE=device_executable_persistor=1, caches.HIT_LOG_MODULE). Checked on
TensorFlow 2.21: "Try loading serialized cache entry" for each lookup, "Loading cached entry
for" on a hit, "Serializing and saving cache entry" when a compiled program is written, "Not
persisting executable" when a read-only pack keeps it out. A log level that hides INFO
hides them too; then the entries a run read (their access times, cache_pack.mark_unread)
are its hits and the entries it added its misses; where reads cannot be seen, hits are
not known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..units import format_duration
from .anatomy import Anatomy, part_label
from .pack_facts import KEPT_LINES, LINE_CAP, PackFacts

LOOKUP = "Try loading serialized cache entry"
HIT = "Loading cached entry for"
SAVED = "Serializing and saving cache entry"
NOT_SAVED = "Not persisting executable"


@dataclass
class PackHits:
    """One run's view of its pack: contents before and after, and TensorFlow's lines."""

    folder: str
    read_only: bool = False
    before: dict[str, int] = field(default_factory=dict)  # {"entries", "bytes"}
    after: dict[str, int] = field(default_factory=dict)
    lookups: int = 0
    hits: int = 0
    saved: int = 0
    lines: list[str] = field(default_factory=list)  # the first hit and miss lines, cut
    read: int | None = None  # entries read, by their access times (None: reads cannot be seen)

    def feed(self, line: str) -> None:
        """One line of the child's stderr."""
        if "device_executable_persistor" not in line:
            return
        if LOOKUP in line:
            self.lookups += 1
        elif HIT in line:
            self.hits += 1
        elif SAVED in line:
            self.saved += 1
        elif NOT_SAVED not in line:
            return
        if len(self.lines) < KEPT_LINES:
            self.lines.append(line[:LINE_CAP])

    @property
    def logged(self) -> bool:
        """TensorFlow's lines came (a log level over INFO hides them)."""
        return self.lookups > 0 or self.hits > 0 or self.saved > 0

    @property
    def found(self) -> int | None:
        """Hits: TensorFlow's lines, else the entries read; None when neither is known."""
        return self.hits if self.logged else self.read

    @property
    def misses(self) -> int:
        if self.logged:
            return max(self.lookups - self.hits, 0)
        return max(self.after.get("entries", 0) - self.before.get("entries", 0), 0)

    def to_dict(self) -> dict[str, Any]:
        return {"folder": self.folder, "read_only": self.read_only, "before": self.before, "after": self.after,
                "hits": self.found, "misses": self.misses, "lines": self.lines}

    def facts(self) -> PackFacts:
        """What the run's record keeps of it."""
        return PackFacts(self.to_dict())


def anatomy_sentence(facts: PackFacts | None, anatomy: Anatomy | None) -> str | None:
    """Which of the first step's parts a pack acts on, in this run's anatomy, and what its hits
    and misses made of them: a hit loads the compiled (and on a GPU autotuned) program, a miss
    compiles and autotunes it in full."""
    if facts is None or anatomy is None:
        return None
    parts = {p.key: p.seconds for p in anatomy.parts}
    shown = [f"{part_label(key)} {format_duration(parts[key])}" for key in ("xla", "gpu_autotune") if key in parts]
    if not shown:
        return None
    hits, misses = facts.hits, facts.misses or 0
    if hits:
        what = (f"with {hits} hit{'s' if hits != 1 else ''} from the pack that is loading the compiled program, "
                "not compiling it" + (f" ({misses} miss{'es' if misses != 1 else ''} compiled in full)" if misses
                                      else ""))
    elif misses:
        what = "compiled in full: the pack had none of it yet, and the next run reads it"
    else:
        return None
    return f"In this run's anatomy, {' and '.join(shown)}: {what}."


def pack_sentence(facts: PackFacts | None) -> str | None:
    """A run's pack in one sentence for its summary; None without a pack."""
    if facts is None or facts.folder is None:
        return None
    hits, misses = facts.hits, facts.misses or 0
    held = f"held {facts.before.entries or 0} XLA programs before the run and {facts.after.entries or 0} after"
    if hits is None:
        found = (f"{misses} compiled and added; hits are not known (the log level hides TensorFlow's lookup lines "
                 "and the file system keeps no read times)")
    elif hits == 0 and misses == 0:
        found = "no XLA program was looked up: the program compiled nothing with XLA"
    else:
        compiled = " (compiled and added)" if not facts.read_only else " (compiled, not added)"
        found = (f"{hits} hit{'s' if hits != 1 else ''}{' (compile skipped)' if hits else ''}, "
                 f"{misses} miss{'es' if misses != 1 else ''}{compiled if misses else ''}")
    mode = ", read-only" if facts.read_only else ""
    return f"Cache pack{mode}: {held}; {found}."
