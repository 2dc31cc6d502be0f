"""Process state a launcher sets on the way (taskset, nice, choom): CPU affinity, niceness, OOM score."""

import os

print("affinity", sorted(os.sched_getaffinity(0)))
print("niceness", os.getpriority(os.PRIO_PROCESS, 0))
with open("/proc/self/oom_score_adj") as f:
    print("oom_score_adj", f.read().strip())
print("scheduler", os.sched_getscheduler(0))
