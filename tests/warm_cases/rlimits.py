"""Resource limits the launcher set (the table lowers open files and core size)."""

import resource

for name in ("RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_STACK"):
    print(name, resource.getrlimit(getattr(resource, name)))
