"""SamplerThread: a run's memory read off the GUI thread, handed over in batches.

psutil and NVML calls take from microseconds to milliseconds (NVML more on a busy driver);
on the GUI thread they were paid between paints at every tick. Here a plain Python thread
samples on its own clock and queues what it read; the GUI drains the queue on its tick and
hands every sample to the session there, so the record is only ever touched by one thread.
No Qt: the thread needs no event loop, and a test can drive it without one.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from tflaunch.core.run.sampling import ResourceSampler

# 25 Hz: above the 20 Hz a live curve needs to look continuous, with room for the jitter of
# a loaded 2-core machine; a sample costs well under a millisecond of CPU.
SAMPLE_INTERVAL_S = 0.04
JOIN_TIMEOUT_S = 2.0  # one sample's worst case: a relisting of the tree, a slow NVML call

Sample = tuple[float, int, dict[int, int]]  # wall-clock time, tree RSS bytes, {gpu index: bytes}


class SamplerThread:
    """Samples one child until stopped; `drain` takes what was read since the last call."""

    def __init__(self, sampler: ResourceSampler, interval: float = SAMPLE_INTERVAL_S) -> None:
        self._sampler = sampler
        self._interval = interval
        # deque's append and popleft are atomic: the one producer and one consumer need no lock.
        self._queue: deque[Sample] = deque()
        self._stopping = threading.Event()
        # A daemon: an app that exits without stopping a run must not hang on its sampler.
        self._thread = threading.Thread(target=self._run, name=f"tflaunch-sampler-{sampler.pid}", daemon=True)

    def follow(self, pid: int) -> None:
        """Sample `pid`'s tree as part of the child's from the next reading on."""
        self._sampler.follow(pid)  # an append the sampling thread reads: atomic, no lock needed

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """End the thread and wait for it (at most one sample's time); safe to call twice."""
        self._stopping.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(JOIN_TIMEOUT_S)

    def drain(self) -> list[Sample]:
        out = []
        while self._queue:
            out.append(self._queue.popleft())
        return out

    def _run(self) -> None:
        due = time.monotonic()
        while not self._stopping.is_set():
            # The time before the reading: the GIL can keep this thread waiting after it (while
            # the GUI thread paints), and a late stamp would bend the curve into steps.
            at = time.time()
            sample = self._sampler.sample()
            if sample is not None:  # None: the child is gone or between states; the run's end stops us
                self._queue.append((at, *sample))
            # On a fixed schedule, so the rate does not sag by a sample's own cost; after a
            # stall (a suspended machine) it starts afresh rather than catching up in a burst.
            due += self._interval
            now = time.monotonic()
            if due < now:
                due = now
            self._stopping.wait(due - now)
