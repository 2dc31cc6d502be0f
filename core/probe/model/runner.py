"""One measured start-up, phase by phase, reported on the channel."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .. import anatomy
from ..channel import Channel
from ..environment import environment
from ..import_xray import ImportXray
from ..nvtx import Ranges
from ..process import io_counters, memory, process_age
from ..tf_setup import import_tensorflow, initialise_devices
from .describe import describe, model_variables
from .entry_point import entry_point
from .inference import all_finite, eager_call, infer, steady_latency, trace
from .input_values import Fed, generate, plan, vocabulary_hints
from .model_files import load_model
from .user_code import import_code


def _packed_call(function: Any) -> Any:
    """A callable of the packed inputs, as the traced function is called."""
    return lambda packed: function(packed)


def _reads(before: Optional[Tuple[int, int]], after: Optional[Tuple[int, int]]) -> Dict[str, int]:
    """A phase's reads, measured in this process at its boundaries: bytes from storage
    (read_bytes) and bytes read at all, page cache included (rchar)."""
    if before is None or after is None:
        return {}
    return {"read_bytes": max(after[0] - before[0], 0), "rchar": max(after[1] - before[1], 0)}


class Probe:
    def __init__(self, channel: Channel, config: dict[str, Any]) -> None:
        self.channel = channel
        self.config = config
        self.current = "spawn"
        self.fed: List[Fed] = []
        self.ranges = Ranges(bool(config.get("nvtx")))
        self.walls: Dict[str, Tuple[float, float]] = {}  # each phase's start and end by the wall clock

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[dict[str, Any]]:
        self.current = name
        self.channel.emit("phase_start", name)
        extra: dict[str, Any] = {}
        self.ranges.push(name)
        io_before = io_counters()
        wall = time.time()
        start = time.perf_counter()
        yield extra
        duration = time.perf_counter() - start
        self.walls[name] = (wall, wall + duration)
        io_after = io_counters()
        self.ranges.pop()
        rss, peak = memory()
        self.channel.emit("phase_end", name, duration=duration, rss=rss, peak_rss=peak, **extra,
                          **_reads(io_before, io_after))

    def run(self) -> None:
        cfg = self.config
        age = process_age()
        self.channel.emit("hello", "spawn", pid=os.getpid(), process_age=age, python=sys.executable)
        if age is None and cfg.get("launched_at"):
            age = time.time() - float(cfg["launched_at"])
        rss, peak = memory()
        # The interpreter's start-up read everything it read so far: the counters from zero.
        self.channel.emit("phase_end", "spawn", duration=max(age or 0.0, 0.0), rss=rss, peak_rss=peak,
                          **_reads((0, 0), io_counters()))
        with self.phase("import"), ImportXray() as xray:
            tf, keras = import_tensorflow()
        # Folded after the phase ends (about 20 ms), so the import's own figure stays pure.
        self.channel.emit("imports", "import", **xray.report())
        if cfg.get("anatomy"):  # an extra, profiled run: from here on, TensorFlow's profiler records
            anatomy.start(tf)
        with self.phase("devices") as extra:
            applied, parts = initialise_devices(tf, cfg)
            if parts:
                extra["parts"] = parts
        applied["nvtx"] = self.ranges.status
        self.channel.emit("settings", "devices", applied=applied)
        with self.phase("load"):
            for target in cfg.get("imports") or []:
                import_code(target)
            model = load_model(tf, keras, cfg["model"], bool(cfg.get("unsafe_deserialization")))
        # Listed before anything is generated, so a user sees what the model takes even
        # when the shapes they gave do not fit it.
        entry = entry_point(model, cfg.get("signature") or None)
        self.channel.emit("inputs", "load", **entry.describe())
        self.fed = fed = plan(entry.inputs, dict(cfg.get("inputs") or {}), int(cfg.get("batch", 1)))
        variables = model_variables(tf, model)
        packed = entry.pack(generate(tf, fed, vocabulary_hints(tf, model, variables)))
        # How the model is called is a setting: a traced function (a trace phase, then
        # calls), or as the user's code might, eagerly or through predict (no trace phase:
        # whatever tracing that does falls in the first call, as it would for them).
        how = str(cfg.get("call") or "function")
        if how == "function":
            with self.phase("trace"):
                fn = trace(tf, entry, fed, bool(cfg.get("jit_compile")))
            used = "function"
        else:
            fn, used = eager_call(entry, model, how)
            fn = _packed_call(fn)
        with self.phase("first"):
            outputs = infer(tf, fn, packed)
        if cfg.get("anatomy"):  # the first call in parts; steady runs with the profiler stopped
            self.channel.emit("anatomy", "first", **anatomy.finish(tf, *self.walls["first"]))
        finite = all_finite(tf, outputs)
        with self.phase("steady") as extra:
            extra["latency"] = steady_latency(
                tf, fn, packed, int(cfg.get("steady", 20)),
                lambda done, total: self.channel.emit("progress", "steady", done=done, total=total))
        model_facts = describe(tf, model, cfg["model"], entry, fed, variables, cfg)
        model_facts["outputs_finite"] = finite
        model_facts["call"] = used
        self.channel.emit("result", "steady", environment=environment(tf, keras), model=model_facts)
