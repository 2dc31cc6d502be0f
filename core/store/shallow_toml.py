"""TOML from a file someone else may have written, read only when it nests shallowly.

tomllib recurses once per nested array or inline table, so `x = [[[[...` five thousand deep
ran it into Python's recursion limit. Caught, that was still harmful in the app: whatever
else Python ran at that depth (a Qt event filter called as the garbage collector freed a
widget) failed too. So the nesting is measured first, by a scan that skips strings and
comments, and a file nested deeper than any profile or trust file is refused unparsed.
"""

from __future__ import annotations

import re
import tomllib
from itertools import accumulate
from typing import Any

MAX_DEPTH = 32  # a profile is a few flat tables; its deepest value is a table in a table


class TooDeepError(ValueError):
    pass


# Strings (each kind of TOML's four, a basic one's escapes included) and comments: what the
# depth is not counted in. Removed by the regex engine, the scan stays fast on a 1 MB file.
_NOT_COUNTED = re.compile(r'"""(?:\\.|[^\\])*?"""|"(?:\\.|[^"\\\n])*"|\'\'\'.*?\'\'\'|\'[^\'\n]*\'|#[^\n]*', re.S)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting_depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings and comments (a table header's
    brackets count too, and close at once: they never add up)."""
    brackets = re.sub(r"[^\[\]{}]+", "", _NOT_COUNTED.sub("", text))
    return max(0, max(accumulate(map(_STEP.__getitem__, brackets)), default=0))


def loads(text: str) -> dict[str, Any]:
    """tomllib.loads for a file nested at most MAX_DEPTH deep; TooDeepError before parsing
    one deeper, tomllib.TOMLDecodeError for one that is not TOML."""
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise TooDeepError(f"it nests arrays or tables {depth} deep (at most {MAX_DEPTH} are read)")
    return tomllib.loads(text)
