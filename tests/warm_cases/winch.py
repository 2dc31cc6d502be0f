"""A resized terminal sends SIGWINCH: progress bars (tqdm, rich, Keras) redraw on it."""

import os
import signal
import sys
import time


def on_resize(number, frame):
    os.write(1, f"resized to {os.get_terminal_size(1)}\n".encode())  # print() could be mid-flush of "ready"
    sys.exit(0)


signal.signal(signal.SIGWINCH, on_resize)
print("ready", flush=True)
time.sleep(2)
print("no SIGWINCH came")
