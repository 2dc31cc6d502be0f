"""Ticks every 30 ms for about 0.6 s: Ctrl+Z must stop the ticks until the shell continues it."""

import time

for _ in range(20):
    print("tick", flush=True)
    time.sleep(0.03)
print("done")
