"""Under a terminal: which streams are ttys, their buffering, the terminal's size."""

import os
import shutil
import sys

print("isatty", [s.isatty() for s in (sys.stdin, sys.stdout, sys.stderr)])
print("line buffered", sys.stdout.line_buffering, sys.stderr.line_buffering)
print("size", os.get_terminal_size(), shutil.get_terminal_size())
print("ttyname", os.ttyname(0) == os.ttyname(1))
