"""`PYTHONPATH=. python sub/pythonpath.py`: the package in the working folder is importable."""

import sys

import pkg.tool  # noqa: F401 (prints what it is)

print("first path entries", sys.path[:2])
