"""A handler for the signal named in argv[1] (TERM, USR1): the launcher's signal must reach it."""

import os
import signal
import sys
import time


def on_signal(number, frame):
    os.write(1, f"got {signal.Signals(number).name}\n".encode())  # print() could be mid-flush of "ready"
    sys.exit(3)


signal.signal(getattr(signal, "SIG" + sys.argv[1]), on_signal)
print("ready", flush=True)
time.sleep(10)
print("no signal came")
