"""Text from outside, made safe to show: what a person reads before saying yes is what is there.

A value in a shared profile can hold terminal escapes (`ESC[1A ESC[2K` erases the line
above, so a list of what a profile runs can lose its LD_PRELOAD line on screen), a
carriage return, Unicode that reorders text (bidi overrides) or hides it (zero-width
characters), or a megabyte of padding. shown() renders every such character as a
visible escape (`\\x1b`, `\\u202e`) and cuts a long value, saying how long it was; the
terminal, the app's dialogs and every listing use it for values they did not write.
"""

from __future__ import annotations

import unicodedata

# Unicode categories that draw nothing or move other text: controls (C0, C1, DEL), format
# characters (bidi overrides, zero-width joiners), line and paragraph separators,
# surrogates (undecodable bytes kept by surrogateescape) and unassigned code points.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
LONGEST = 300  # characters of one value shown before it is cut


def _visible(char: str) -> str:
    if unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def shown(value: object, longest: int = LONGEST) -> str:
    """`value` as one line that shows every character it holds; cut after `longest`
    characters with the full length said."""
    text = value if isinstance(value, str) else str(value)
    cut = len(text) > longest
    safe = "".join(_visible(c) for c in (text[:longest] if cut else text))
    return f"{safe}… ({len(text)} characters in all)" if cut else safe


def shown_lines(text: str, longest: int = 100_000) -> str:
    """A whole file's text for a reader: lines kept, every other hidden character shown."""
    lines = text.split("\n")
    body = "\n".join("".join(_visible(c) for c in line) for line in lines)
    if len(body) > longest:
        return f"{body[:longest]}\n… ({len(text)} characters in all; the rest is not shown)"
    return body

