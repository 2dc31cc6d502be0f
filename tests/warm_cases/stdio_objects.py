"""sys.stdin/stdout/stderr as a cold interpreter makes them (names, encodings, buffering)."""

import sys

for stream in (sys.stdin, sys.stdout, sys.stderr):
    print(stream.name, stream.mode, stream.encoding, stream.errors, stream.line_buffering,
          stream.write_through, type(stream.buffer).__name__)
print("same as __stdout__", sys.stdout is sys.__stdout__, sys.stderr is sys.__stderr__, sys.stdin is sys.__stdin__)
