"""An uncaught KeyboardInterrupt: its traceback, atexit, then the end by SIGINT."""

import atexit

atexit.register(print, "atexit ran")


def train():
    raise KeyboardInterrupt


print("training")
train()
