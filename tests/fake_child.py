"""A stand-in interpreter for the soak and the fault matrix: speaks the probe's protocol,
or misbehaves on request, without TensorFlow.

builders.fake_python() puts this file behind a shebang naming the real interpreter; a run
uses it as its Python. It ignores its arguments; the run's variable TFLAUNCH_FAKE_CHILD
says what to do (see main). Without it (the app's interpreter check) or with "real" it
becomes the real interpreter with the same arguments, so real runs go through it too.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time

from tflaunch.core.run.events import encode

CHILD_ENV = "TFLAUNCH_FAKE_CHILD"
MARKER_ENV = "TFLAUNCH_FAKE_MARKER"  # put in helpers' argv, to find leftovers
INPUTS = [{"name": "pixels", "dtype": "float32", "shape": [None, 784]}]


def emit(event: str, phase: str, **fields: object) -> None:
    sys.stdout.write(encode(event, phase, time.time(), **fields) + "\n")
    sys.stdout.flush()


def hello() -> None:
    emit("hello", "spawn", pid=os.getpid(), process_age=0.02, python=sys.executable)
    emit("phase_end", "spawn", duration=0.02, rss=20 << 20, peak_rss=20 << 20)


def start(name: str) -> None:
    emit("phase_start", name)


def end(name: str, duration: float = 0.001) -> None:
    extra = {"latency": {"median": 1e-4, "min": 1e-4, "max": 2e-4, "p90": 2e-4, "n": 3}} if name == "steady" else {}
    emit("phase_end", name, duration=duration, rss=50 << 20, peak_rss=60 << 20, **extra)


def start_until(last: str, durations: dict[str, float] | None = None) -> None:
    """hello, then every phase before `last` (with `durations` where given), then `last`
    started and left open."""
    hello()
    for name in ("import", "devices", "load", "trace", "first", "steady"):
        start(name)
        if name == last:
            return
        end(name, (durations or {}).get(name, 0.001))
        if name == "devices":
            emit("settings", "devices", applied={"intra_op_threads": 0, "inter_op_threads": 0})
        elif name == "load":
            emit("inputs", "load", inputs=INPUTS, signature=None, signatures=[])


def succeed(durations: dict[str, float] | None = None) -> None:
    """A whole run that ends ok, unless a duration in `durations` is one a reader refuses."""
    start_until("", durations)
    print("I fake: a TensorFlow log line", file=sys.stderr)
    emit("result", "steady", environment={"tensorflow": "fake", "python": sys.version.split()[0]},
         model={"name": "fake", "format": "sample", "params": 7850})


def note(name: str, value: object) -> None:
    """Tell the test something (a pid) through a file next to this script, atomically."""
    path = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), name)
    with open(path + ".tmp", "w") as f:
        f.write(str(value))
    os.replace(path + ".tmp", path)


def crash(signal_name: str) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file per run
    os.kill(os.getpid(), getattr(signal, signal_name))
    time.sleep(5)  # a signal the process survives (it is not one): fail the expectation


def main() -> None:
    """Modes: real, ok, fail (exit 3 in load), error (an error event in trace), crash
    (SIGSEGV in devices), crash:PHASE:SIGNAME, hang (in load, with a helper process),
    garbage (non-protocol stdout between valid events, then ok), doublefork (a setsid
    grandchild holding the pipes, then exit 3 in load), flood (a 50 MB stderr line, then
    ok), exit0 (exits 0 in load without a word), remedies (0.45 s, 0.4 s less with oneDNN
    off, 0.2 s more with one intra-op thread)."""
    child = os.environ.get(CHILD_ENV, "real")
    if child == "real":
        os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
    if child == "ok":
        succeed()
        return
    if child == "remedies":  # a start that settings change: oneDNN off saves, one thread costs
        config = json.loads(sys.argv[-1]) if sys.argv[-1].startswith("{") else {}
        # A saving of 0.4 s: above the spikes a loaded 2-core machine puts into a 3-run arm
        # (0.25 s once read as "within the noise" there, a flaky Advisor test).
        seconds = 0.45 - (0.4 if os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "0" else 0.0) \
            + (0.2 if config.get("intra") == 1 else 0.0)
        time.sleep(seconds)
        succeed({"import": seconds})
        return
    if child == "fail":  # dies mid-phase without a word on the channel
        start_until("load")
        print("Traceback (most recent call last):\nOSError: fake: the model went away", file=sys.stderr, flush=True)
        os._exit(3)
    if child == "error":  # says why on the channel, then exits
        start_until("trace")
        emit("error", "trace", kind="exception", message="fake: tracing failed", detail="")
        sys.exit(1)
    if child == "crash":
        start_until("devices")
        crash("SIGSEGV")
    if child.startswith("crash:"):
        _, in_phase, signal_name = child.split(":")
        if in_phase != "spawn":
            start_until(in_phase)
        crash(signal_name)
    if child == "hang":  # with a helper in its process group, as data loaders do
        start_until("load")
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", os.environ.get(MARKER_ENV, "")])
        while True:
            time.sleep(60)
    if child == "garbage":
        for line in ("not json", "{\"v\": 1, \"event\": \"phase_end\"}", "[1, 2]", "\x00\xff{{{"):
            print(line, flush=True)
        succeed()
        return
    if child == "doublefork":  # a daemon that leaves the group, holds the pipes and outlives the child
        start_until("load")
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(3600)",
                                          os.environ.get(MARKER_ENV, "")])
            os._exit(0)
        os._exit(3)
    if child == "flood":  # one 50 MB line on stderr, then a healthy run
        sys.stderr.write("x" * (50 << 20) + "\n")
        sys.stderr.flush()
        succeed()
        return
    if child == "exit0":
        start_until("load")
        sys.exit(0)
    sys.exit(f"fake child: unknown mode {child!r}")


if __name__ == "__main__":
    main()
