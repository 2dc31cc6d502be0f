"""Numbers on the command line: ASCII digits only.

Python's int() and float() read any script's digits ('١٢' is 12, '１' is 1): a value a
person cannot check by eye, and one no shell script means. argparse types here accept
the ASCII forms only and say so, naming the text given.
"""

from __future__ import annotations

import argparse
import math
import re

_WHOLE = re.compile(r"[+-]?[0-9]+\Z")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def whole(text: str) -> int:
    """A whole number in ASCII digits (its range is the option's own check)."""
    if not _WHOLE.match(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a whole number in the digits 0-9, not {text!r}")
    return int(text)


def positive_whole(text: str) -> int:
    value = whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def decimal(text: str) -> float:
    """A finite number in ASCII digits (1, 2.5, 1e3)."""
    value = float(text) if _DECIMAL.match(text.strip()) else math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a number in the digits 0-9, not {text!r}")
    return value
