"""sys.exit with a string, an int, None or 256, and os._exit, after a buffered line."""

import os
import sys

print("before the exit")
kind = sys.argv[1]
if kind == "message":
    sys.exit("bad configuration")
if kind == "none":
    sys.exit(None)
if kind == "os_exit":
    os._exit(7)
sys.exit(int(kind))
