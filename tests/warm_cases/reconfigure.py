"""sys.stdout.reconfigure(line_buffering=True), as training scripts do for their logs in a pipe."""

import sys

sys.stdout.reconfigure(line_buffering=True)
print("out 1")
print("err 1", file=sys.stderr)
print("out 2")
