"""Threads: joined, one left running (the interpreter waits for it), and a daemon that never ends."""

import threading
import time

results = []
workers = [threading.Thread(target=lambda i=i: results.append(i * i)) for i in range(4)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
print("joined", sorted(results))
threading.Thread(target=threading.Event().wait, daemon=True).start()


def late():
    time.sleep(0.2)
    print("late thread done", flush=True)


threading.Thread(target=late).start()
print("main done", threading.active_count(), flush=True)
