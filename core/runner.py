"""Runs the probe in a child process without Qt: the engine of the command line.

One thread multiplexes the child's two pipes with selectors and samples its memory
between reads, so a child that floods stderr cannot stall event handling and a hung
child is stopped when its timeout passes.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from typing import Callable

from .config import LaunchConfig
from .events import EventParser, LineBuffer
from .process_tree import TreeSampler, kill_tree
from .run import Failure, RunRecord

SAMPLE_INTERVAL_S = 0.1  # 10 Hz, as the GUI's graph
EventCallback = Callable[[RunRecord], None]


def run_probe(
    config: LaunchConfig,
    on_update: EventCallback | None = None,
    command: list[str] | None = None,
) -> RunRecord:
    """Run one probe to completion and return its record; never raises for child failures.

    `on_update` is called after every event and every memory sample. `command` replaces
    the probe's argv (tests use it to stand in a misbehaving child).
    """
    record = RunRecord(config)
    problems = [p for p in config.validate() if p.field in ("python", "model")]
    if problems:
        record.failure = Failure(f"invalid_{problems[0].field}", problems[0].message)
        record.failed_phase = "spawn" if problems[0].field == "python" else "load"
        record.finish(None)
        return record
    try:
        proc = subprocess.Popen(
            command or config.command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a Ctrl+C in the terminal reaches us, not the child
        )
    except OSError as exc:
        record.failure = Failure("spawn_failed", f"Could not start {config.python}: {exc.strerror or exc}.")
        record.failed_phase = "spawn"
        record.finish(None)
        return record
    _pump(proc, record, on_update)
    return record


def _pump(proc: subprocess.Popen, record: RunRecord, on_update: EventCallback | None) -> None:
    parser = EventParser()
    buffers = {proc.stdout: LineBuffer(), proc.stderr: LineBuffer()}
    selector = selectors.DefaultSelector()
    for stream in buffers:
        selector.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + record.config.timeout
    sampler = TreeSampler(proc.pid)
    next_sample = 0.0
    cancelled = timed_out = False
    try:
        while selector.get_map():
            now = time.monotonic()
            for key, _ in selector.select(timeout=max(0.0, next_sample - now)):
                chunk = os.read(key.fd, 65536)
                stream = key.fileobj
                lines = buffers[stream].feed(chunk) if chunk else buffers[stream].flush()
                if not chunk:
                    selector.unregister(stream)
                for line in lines:
                    if stream is proc.stdout:
                        event = parser.parse(line)
                        if event is not None:
                            record.apply(event)
                            if on_update:
                                on_update(record)
                    else:
                        record.add_stderr(line)
            now = time.monotonic()
            if now >= next_sample:
                next_sample = now + SAMPLE_INTERVAL_S
                rss = sampler.rss(now)
                if rss is not None:
                    record.add_sample(time.time(), rss)
                    if on_update:
                        on_update(record)
            if now > deadline:
                timed_out = True
                kill_tree(proc.pid)
                break
    except KeyboardInterrupt:
        cancelled = True
        kill_tree(proc.pid)
    finally:
        selector.close()
        # A child can close its pipes and keep running; the deadline still holds.
        try:
            returncode = proc.wait(timeout=None if cancelled or timed_out else max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_tree(proc.pid)
            returncode = proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    record.malformed_lines = parser.malformed + parser.unknown
    signal_number = -returncode if returncode < 0 else None
    exit_code = returncode if returncode >= 0 else None
    record.finish(exit_code, signal_number, cancelled=cancelled, timed_out=timed_out)
    if on_update:
        on_update(record)
