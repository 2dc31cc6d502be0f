"""Says it is ready, then sleeps: what a signal or Ctrl+C interrupts."""

import time


def wait():
    time.sleep(10)


print("ready", flush=True)
wait()
print("slept to the end")
