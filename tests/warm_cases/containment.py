"""What contains the process: its cgroup (systemd, SLURM, Kubernetes limits), namespaces, privileges."""

import os

with open("/proc/self/cgroup") as f:
    print("cgroup", f.read().strip())
print("namespaces", sorted(f"{n}:{os.readlink('/proc/self/ns/' + n)}" for n in os.listdir("/proc/self/ns")))
with open("/proc/self/status") as f:
    wanted = ("NoNewPrivs", "Seccomp", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "Mems_allowed_list")
    print([line.strip() for line in f if line.startswith(wanted)])
