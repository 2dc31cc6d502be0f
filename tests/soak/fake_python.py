"""A stand-in interpreter for the soak: speaks the probe's protocol, or misbehaves on request.

The soak copies this file behind a shebang naming the real interpreter and sets it as the
run's Python. It ignores its arguments; the run's extra variable TFLAUNCH_SOAK_CHILD says
what to do. Without it (the app's interpreter check) or with "real" it becomes the real
interpreter with the same arguments, so real TensorFlow runs go through it too.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time

from tflaunch.core.run.events import encode

CHILD_ENV = "TFLAUNCH_SOAK_CHILD"
MARKER_ENV = "TFLAUNCH_SOAK_MARKER"
INPUTS = [{"name": "pixels", "dtype": "float32", "shape": [None, 784]}]


def emit(event: str, phase: str, **fields: object) -> None:
    sys.stdout.write(encode(event, phase, time.time(), **fields) + "\n")
    sys.stdout.flush()


def phase(name: str) -> None:
    emit("phase_start", name)
    extra = {"latency": {"median": 1e-4, "min": 1e-4, "max": 2e-4, "p90": 2e-4, "n": 3}} if name == "steady" else {}
    emit("phase_end", name, duration=0.001, rss=50 << 20, peak_rss=60 << 20, **extra)


def start_until(last: str) -> None:
    """hello, then every phase before `last`, then `last` started and left open."""
    emit("hello", "spawn", pid=os.getpid(), process_age=0.02, python=sys.executable)
    emit("phase_end", "spawn", duration=0.02, rss=20 << 20, peak_rss=20 << 20)
    for name in ("import", "devices", "load", "trace", "first", "steady"):
        if name == last:
            emit("phase_start", name)
            return
        phase(name)
        if name == "devices":
            emit("settings", "devices", applied={"intra_op_threads": 0, "inter_op_threads": 0})
        elif name == "load":
            emit("inputs", "load", inputs=INPUTS, signature=None, signatures=[])


def succeed() -> None:
    start_until("")
    print("I soak: a fake TensorFlow log line", file=sys.stderr)
    emit("result", "steady", environment={"tensorflow": "soak", "python": sys.version.split()[0]},
         model={"name": "soak", "format": "sample", "params": 7850})


def main() -> None:
    child = os.environ.get(CHILD_ENV, "real")
    if child == "real":
        os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
    if child == "ok":
        succeed()
        return
    if child == "fail":  # dies mid-phase without a word on the channel
        start_until("load")
        print("Traceback (most recent call last):\nOSError: soak: the model went away", file=sys.stderr, flush=True)
        os._exit(3)
    if child == "error":  # says why on the channel, then exits
        start_until("trace")
        emit("error", "trace", kind="exception", message="soak: tracing failed", detail="")
        sys.exit(1)
    if child == "crash":
        start_until("devices")
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file per run
        os.kill(os.getpid(), signal.SIGSEGV)
    if child == "hang":  # with a helper in its process group, as data loaders do
        start_until("load")
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", os.environ.get(MARKER_ENV, "")])
        while True:
            time.sleep(60)
    sys.exit(f"soak: unknown child {child!r}")


if __name__ == "__main__":
    main()
