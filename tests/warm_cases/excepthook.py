"""A script's own sys.excepthook (crash reporters) decides how an uncaught error is shown."""

import sys


def hook(kind, value, tb):
    print("custom hook:", kind.__name__, value, file=sys.stderr)


sys.excepthook = hook
raise ValueError("reported by the hook")
