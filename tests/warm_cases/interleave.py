"""stdout and stderr into one pipe: the order a cold interpreter's buffering gives."""

import sys

print("out 1")
print("err 1", file=sys.stderr)
print("out 2")
sys.stdout.write("big " * 3000 + "\n")
print("err 2", file=sys.stderr)
print("out 3")
