"""One measured start-up, phase by phase, reported on the channel."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any, Iterator

from .channel import Channel
from .describe import describe, environment
from .inference import infer, make_inputs, steady_latency, trace
from .model_files import load_model
from .process import memory, process_age
from .tf_setup import apply_tf_config, import_tensorflow, read_back


class Probe:
    def __init__(self, channel: Channel, config: dict[str, Any]) -> None:
        self.channel = channel
        self.config = config
        self.current = "spawn"

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[dict[str, Any]]:
        self.current = name
        self.channel.emit("phase_start", name)
        extra: dict[str, Any] = {}
        start = time.perf_counter()
        yield extra
        duration = time.perf_counter() - start
        rss, peak = memory()
        self.channel.emit("phase_end", name, duration=duration, rss=rss, peak_rss=peak, **extra)

    def run(self) -> None:
        cfg = self.config
        age = process_age()
        self.channel.emit("hello", "spawn", pid=os.getpid(), process_age=age, python=sys.executable)
        if age is None and cfg.get("launched_at"):
            age = time.time() - float(cfg["launched_at"])
        rss, peak = memory()
        self.channel.emit("phase_end", "spawn", duration=max(age or 0.0, 0.0), rss=rss, peak_rss=peak)
        with self.phase("import"):
            tf, keras = import_tensorflow()
        with self.phase("devices"):
            apply_tf_config(tf, cfg)
            applied = read_back(tf, cfg)
        self.channel.emit("settings", "devices", applied=applied)
        with self.phase("load"):
            model = load_model(tf, keras, cfg["model"])
        with self.phase("trace"):
            fn, specs = trace(tf, model, bool(cfg.get("jit_compile")))
        inputs = make_inputs(tf, specs, int(cfg.get("batch", 1)))
        with self.phase("first"):
            infer(tf, fn, inputs)
        with self.phase("steady") as extra:
            extra["latency"] = steady_latency(tf, fn, inputs, int(cfg.get("steady", 20)))
        self.channel.emit("result", "steady", environment=environment(tf, keras),
                          model=describe(model, cfg["model"], specs, inputs))
