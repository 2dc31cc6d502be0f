"""sys.orig_argv: the interpreter's own command line."""

import sys

print("orig_argv", sys.orig_argv)
print("executable", sys.executable)
