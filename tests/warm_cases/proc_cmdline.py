"""The command line as the kernel and ps see it."""

with open("/proc/self/cmdline", "rb") as f:
    print("cmdline", f.read().split(b"\0")[1:-1])
