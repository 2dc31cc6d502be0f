"""stdin as a cold interpreter gives it: no newline translation, EOF, or none at all."""

import sys

if sys.stdin is None:
    print("no stdin")
else:
    data = sys.stdin.read()
    print("read", repr(data), "then", repr(sys.stdin.readline()))
