"""The file descriptors a script starts with (a cold one: 0, 1, 2)."""

import os
import re

for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        continue  # the folder listdir had open
    print(fd, re.sub(r"\[\d+\]", "", target))
