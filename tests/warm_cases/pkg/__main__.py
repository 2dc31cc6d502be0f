"""`python -m pkg ARGS`: a package's __main__; `raise` in argv shows the traceback's frames."""

import sys

print("spec", __spec__.name, "file", __file__, "argv", sys.argv)
if "raise" in sys.argv:
    raise LookupError("from the package's __main__")
