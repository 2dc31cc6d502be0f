"""Arguments and variables that are not UTF-8 (file names from old systems): kept as Python keeps them."""

import os
import sys

print("argv", ascii(sys.argv[1:]))
print("environ", ascii(os.environ.get("CASE_LATIN1")), os.environb.get(b"CASE_LATIN1"))
