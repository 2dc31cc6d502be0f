"""Who the script's parent, group and session are (the launcher's pid is in the environment)."""

import os

launcher = int(os.environ["CASES_LAUNCHER_PID"])
print("parent is the launcher", os.getppid() == launcher)
print("own process group", os.getpgrp() == os.getpid())
print("launcher's session", os.getsid(0) == os.getsid(launcher))
