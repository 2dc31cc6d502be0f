"""/dev/tty (getpass, pagers and prompts open it) and whether the script is in the foreground."""

import os

try:
    with open("/dev/tty", "w") as tty:
        tty.write("written to /dev/tty\n")
except OSError as exc:
    print("cannot open /dev/tty:", exc)
print("foreground", os.tcgetpgrp(0) == os.getpgrp())
