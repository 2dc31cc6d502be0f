"""20 MB to stdout in lines: all of it must arrive, in order."""

import sys

line = "x" * 99 + "\n"
for i in range(200_000):
    sys.stdout.write(f"{i:08d}{line[8:]}")
