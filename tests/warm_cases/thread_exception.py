"""An exception in a thread: threading's report of it, and the main thread carries on."""

import threading


def work():
    raise ValueError("in the worker")


worker = threading.Thread(target=work, name="worker")
worker.start()
worker.join()
print("main carries on")
