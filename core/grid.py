"""Plain-text tables for the terminal: left-aligned first column, numbers right-aligned."""

from __future__ import annotations

from collections.abc import Sequence


def grid(header: Sequence[str], rows: Sequence[Sequence[str]], text: Sequence[int] = ()) -> str:
    """`text`: more columns of words, left-aligned like the first (a sentence reads badly
    right-aligned)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    left = {0, *text}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=False))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])
