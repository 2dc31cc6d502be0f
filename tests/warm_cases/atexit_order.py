"""atexit handlers run last registered first, after the main module and its threads end."""

import atexit
import threading
import time

atexit.register(print, "registered first, runs last")
atexit.register(lambda: print("registered second"))


@atexit.register
def third():
    print("registered third, runs first")
    atexit.register(print, "registered while exiting")


threading.Thread(target=lambda: (time.sleep(0.1), print("thread ends before atexit"))).start()
print("main ends")
