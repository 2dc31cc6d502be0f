"""What one run measured, built up from its events, stderr and exit: the figures only.

The run's words, its ending and its JSON are the modules that read these (words.py,
ending.py, record_json.py); record.py's RunRecord puts them together. Nothing here
imports them, so they can import this without a loop.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from ..phases import PART_LABELS, SPAWN, STEADY, model_phases
from ..settings.config import LaunchConfig
from ..subject import Subject
from . import events as ev
from . import fold
from .anatomy import Anatomy
from .environment_facts import EnvironmentFacts
from .gpus.launch_gpus import LaunchGpus
from .import_facts import ImportFacts
from .model_facts import ModelFacts
from .pack_facts import PackFacts
from .read_back import ReadBack
from .status import PhaseState, RunStatus
from .storage.eviction import PageCacheReport
from .trial_node import TrialNode
from .warm.warm_facts import WarmStart
from .watch_cost import WatchCost

# What a run keeps of its child's stderr (for the history and the failure's excerpt): the
# last lines, and never more than STDERR_TAIL_BYTES together, however much was written.
STDERR_TAIL_LINES = 200
STDERR_TAIL_BYTES = 64 * 1024
STDERR_LINE_CHARS = 4096  # the session cuts longer lines as it reads them
# A failed run keeps its child's whole output (stderr, a program's stdout) in the history, up
# to this much: beyond it, the first part, a line saying how much was left out, and the tail.
# A run that succeeded keeps only the tail.
OUTPUT_KEPT_BYTES = 8 << 20
# What one run keeps of the names and points a program reports (OpenTelemetry's SpanLimits):
# more are counted as dropped, never stored.
MAX_PHASE_NAMES = 64
MAX_MARKS = 1000
MAX_NOTES = 32  # notes a child may add to a run (notice events), beyond the launcher's own
LATE_EVENTS_KEPT = 3  # events after a probe's result: the first few kept, to say what they were


@dataclass
class PhaseRecord:
    name: str
    state: PhaseState = PhaseState.WAITING
    started: float | None = None  # wall-clock time
    duration: float | None = None
    rss: int | None = None
    peak_rss: int | None = None
    latency: dict[str, float] = field(default_factory=dict)
    progress: tuple[int, int] | None = None  # (done, total) calls, while a repeating phase runs
    parts: dict[str, float] = field(default_factory=dict)  # seconds by part: devices on a GPU machine
    count: int | None = None  # retraces: how many traces beyond each function's first
    read_bytes: int | None = None  # read from storage during the phase (the child's /proc/self/io)
    rchar: int | None = None  # read at all, page cache included


@dataclass
class Failure:
    kind: str
    message: str
    detail: str = ""


@dataclass
class RecordData:
    config: LaunchConfig
    launched_at: float = field(default_factory=time.time)
    status: RunStatus = RunStatus.RUNNING
    # The phases the subject reported, in the order they started: a model's and a program's
    # alike appear as reached (expected_phases says what a running model has still to come).
    phases: dict[str, PhaseRecord] = field(default_factory=dict)
    settings: ReadBack = field(default_factory=ReadBack)  # as the child read them back (read_back.py)
    environment: EnvironmentFacts = field(default_factory=EnvironmentFacts)  # the child's (environment_facts.py)
    model: ModelFacts = field(default_factory=ModelFacts)  # what the probe said of the model (model_facts.py)
    imports: ImportFacts | None = None  # the import X-ray (import_facts.py); None until timed
    anatomy: Anatomy | None = None  # a profiled run's first step in parts (run/anatomy.py); None: not profiled
    failure: Failure | None = None
    failed_phase: str | None = None
    exit_code: int | None = None
    exit_signal: int | None = None
    pid: int | None = None
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_TAIL_LINES))
    output: list[str] = field(default_factory=list)  # every line of stderr_tail's, up to OUTPUT_KEPT_BYTES
    output_dropped: int = 0  # lines past OUTPUT_KEPT_BYTES: only the tail has them
    samples: list[tuple[float, int]] = field(default_factory=list)  # (s since launch, bytes)
    gpu_samples: list[tuple[float, dict[int, int]]] = field(default_factory=list)  # (s, {gpu: bytes})
    described: bool = False  # the probe's result arrived
    ready_at: float | None = None  # wall clock at the end of the first inference
    malformed_lines: int = 0
    heard_probe: bool = False  # at least one protocol event arrived: the child runs the probe
    finished_at: float | None = None
    history_id: int | None = None  # row in the run history, once stored
    node: TrialNode | None = None  # the cluster node a sweep's trial ran on (trial_node.py); None off a cluster
    # Who launched it, as the history stores it (gui, cli, sweep, doctor, cluster): set when a
    # recorder starts it, read back with it; "" for a run no recorder watched (run_kind.py).
    source: str = ""
    launch_notes: list[str] = field(default_factory=list)  # what the launcher did first (a cache emptied, and why)
    launch_gpus: LaunchGpus | None = None  # NVML at launch (gpus/launch_gpus.py); None where it saw no GPU
    page_cache: PageCacheReport | None = None  # a cold or preloaded start's eviction; None for a warm one
    cache_pack: PackFacts | None = None  # what its cache pack held and gave (pack_facts.py); None without one
    watching: WatchCost | None = None  # what watching cost a program to its ready point, by its own clock
    marks: list[tuple[str, float]] = field(default_factory=list)  # a program's own points: (name, s since launch)
    warm_start: WarmStart | None = None  # a launch asked to start warm: how it started (warm_facts.py)
    stopped_at_ready: bool = False  # tflaunch ended the program at its ready point: not a failure
    steady_ended: bool = False  # a program's steady state is over (measured, or none to measure)
    dropped: int = 0  # phase names and marks over the caps, not kept
    late_events: list[ev.Event] = field(default_factory=list)  # after the probe's result: ignored (the first few)
    late_count: int = 0
    _stderr_bytes: int = field(default=0, init=False, repr=False, compare=False)  # of stderr_tail, UTF-8
    _output_bytes: int = field(default=0, init=False, repr=False, compare=False)  # of output, UTF-8

    def __post_init__(self) -> None:
        if not self.phases:
            self.phases = {SPAWN: PhaseRecord(SPAWN, PhaseState.RUNNING, self.launched_at)}

    @property
    def is_program(self) -> bool:
        """The subject is the user's own program, observed by the launch hook."""
        return self.config.is_program

    @property
    def subject_type(self) -> Subject:
        """What it measured, as a value (subject.py): its phases, ready point and words."""
        return self.config.subject_type

    @property
    def phase_order(self) -> list[str]:
        """The phases reached, in the order they started."""
        return list(self.phases)

    @property
    def expected_phases(self) -> tuple[str, ...]:
        """What a running model will still report, shown as waiting (the probe's phases for
        its --call); nothing for a program, whose phases are known only as it reports them,
        nor for a finished run: it has what it reached."""
        if self.is_program or self.status is not RunStatus.RUNNING:
            return ()
        return tuple(p for p in model_phases(self.config.call) if p not in self.phases)

    def phase(self, name: str) -> PhaseRecord | None:
        """The phase, if the subject reported it."""
        return self.phases.get(name)

    @property
    def ready_phase(self) -> str | None:
        """The phase whose end is the ready point, as its subject says (Subject.ready_phase)."""
        return self.subject_type.ready_phase(self.config.until)

    def _named(self, name: str) -> PhaseRecord | None:
        """The phase called `name`, added when first reported; None past the cap."""
        phase = self.phases.get(name)
        if phase is None:
            if len(self.phases) >= MAX_PHASE_NAMES:
                self.dropped += 1
                return None
            phase = self.phases[name] = PhaseRecord(name)
        return phase

    def _reorder(self) -> None:
        """A program's phases in the order they started (one may be reported only at its end)."""
        if self.is_program:
            ordered = sorted(self.phases.values(), key=lambda p: (p.started is None, p.started or 0.0))
            self.phases = {p.name: p for p in ordered}

    @property
    def subject(self) -> str:
        """What the run was of: the model or the program."""
        return self.config.subject

    # -- feeding -----------------------------------------------------------------------
    def apply(self, event: ev.Event) -> None:
        self.heard_probe = True
        if isinstance(event, ev.Hello):
            self.pid = event.pid
            if event.process_age is not None:
                self.phases[SPAWN].started = event.ts - event.process_age
        elif isinstance(event, ev.PhaseStart):
            started = self._named(event.phase)
            if started is not None:
                started.state, started.started = PhaseState.RUNNING, event.ts
                self._reorder()
        elif isinstance(event, ev.PhaseEnd):
            if event.phase == STEADY and self.is_program:
                self.steady_ended = True
                if not event.latency.get("n"):  # no step or call after the ready point: no phase
                    self.phases.pop(STEADY, None)
                    return
            ended = self._named(event.phase)
            if ended is None:
                return
            phase = ended
            duration = event.duration
            if event.phase == SPAWN and event.ts > self.launched_at:
                # The OS's start time ticks at 10 ms and can read earlier than our launch;
                # the process cannot have started before we launched it.
                duration = min(duration, event.ts - self.launched_at)
            phase.state, phase.duration = PhaseState.DONE, duration
            phase.rss, phase.peak_rss, phase.latency = event.rss, event.peak_rss, dict(event.latency)
            phase.parts = dict(event.parts)
            phase.count = event.count
            phase.read_bytes, phase.rchar = event.read_bytes, event.rchar
            if event.start is not None and event.phase != SPAWN:
                phase.started = event.start  # when it ran, as the program's clock read it (build is told late)
            elif phase.started is None or event.phase == SPAWN:
                phase.started = event.ts - duration
            if self.ready_at is None and fold.is_ready_point(self.is_program, self.config.until, "end", event.phase):
                self.ready_at = event.ts if event.start is None else event.start + duration
            self._reorder()
        elif isinstance(event, ev.Mark):
            if len(self.marks) >= MAX_MARKS:
                self.dropped += 1
                return
            self.marks.append((event.name, max(event.ts - self.launched_at, 0.0)))
            if self.ready_at is None and fold.is_ready_point(self.is_program, self.config.until, "mark", event.name):
                self.ready_at = event.ts
        elif isinstance(event, ev.InputsListed):
            # Kept with the model's description, so a run that fails later still shows them.
            self.model = self.model.told({"declared_inputs": list(event.inputs), "signature": event.signature,
                                          "signatures": list(event.signatures)})
        elif isinstance(event, ev.SettingsApplied):
            self.settings = event.applied
        elif isinstance(event, ev.Result):
            nvml = {"nvml": self.launch_gpus.to_dict()} if self.launch_gpus is not None else {}
            self.environment, self.model = event.environment.told(nvml), self.model.told(event.model.described)
            self.described = True
        elif isinstance(event, ev.ProbeError):
            self.failure = Failure(event.kind, event.message, event.detail)
            self.failed_phase = event.phase
        elif isinstance(event, ev.Notice):
            if len(self.launch_notes) < MAX_NOTES and event.message not in self.launch_notes:
                self.launch_notes.append(event.message)
        elif isinstance(event, ev.ImportsMeasured):
            self.imports = event.imports
        elif isinstance(event, ev.AnatomyMeasured):
            self.anatomy = event.anatomy
        elif isinstance(event, ev.WatchingCounted):
            self.watching = event.cost
        elif isinstance(event, ev.Progress):
            running = self.phases.get(event.phase)
            if running is not None:
                running.progress = (event.done, event.total)

    def ignore_late(self, event: ev.Event) -> None:
        """An event after the probe's result, which ends what the probe says: counted, never applied."""
        self.late_count += 1
        if len(self.late_events) < LATE_EVENTS_KEPT:
            self.late_events.append(event)

    def add_stderr(self, line: str) -> None:
        # Lines from a session are cut already (with a note, hence the slack); this is for
        # lines that come another way, such as an older history's.
        if len(line) > STDERR_LINE_CHARS + 64:
            line = f"{line[:STDERR_LINE_CHARS]} … [line cut: {len(line) - STDERR_LINE_CHARS} more characters]"
        size = _size(line)
        if self._output_bytes + size <= OUTPUT_KEPT_BYTES and not self.output_dropped:
            self.output.append(line)
            self._output_bytes += size
        else:
            self.output_dropped += 1
        tail = self.stderr_tail
        if tail.maxlen is not None and len(tail) == tail.maxlen:
            self._stderr_bytes -= _size(tail[0])  # append will push it out
        tail.append(line)
        self._stderr_bytes += size
        while self._stderr_bytes > STDERR_TAIL_BYTES and len(tail) > 1:
            self._stderr_bytes -= _size(tail.popleft())

    def add_sample(self, at: float, rss: int, gpu: dict[int, int] | None = None) -> None:
        """A memory sample taken at wall-clock time `at`: process-tree RSS, GPU memory."""
        self.samples.append((at - self.launched_at, rss))
        if gpu:
            self.gpu_samples.append((at - self.launched_at, gpu))

    def whole_output(self) -> list[str]:
        """Every line the child wrote, as far as kept: the first OUTPUT_KEPT_BYTES, then (past
        them) a line saying how many were left out and the tail's lines after the gap."""
        if not self.output_dropped:
            return list(self.output)
        after = list(self.stderr_tail)[-min(self.output_dropped, len(self.stderr_tail)):]
        left_out = self.output_dropped - len(after)
        gap = [f"[… {left_out} lines left out: a run keeps {OUTPUT_KEPT_BYTES >> 20} MiB of its output …]"] \
            if left_out else []
        return [*self.output, *gap, *after]

    def forget_output(self) -> None:
        """A run that succeeded keeps only its tail."""
        self.output, self.output_dropped, self._output_bytes = [], 0, 0

    def stderr_excerpt(self, lines: int = 12) -> str:
        return "\n".join(list(self.stderr_tail)[-lines:])

    # -- reading -----------------------------------------------------------------------
    @property
    def current_phase(self) -> str | None:
        """The phase that started last and has not ended; else a running model's next one
        (it is between two phases); else the last one reached (None before any)."""
        running = [n for n, p in self.phases.items() if p.state is PhaseState.RUNNING]
        if running:
            return running[-1]
        if self.expected_phases:
            return self.expected_phases[0]
        ended = [p for p in self.phases.values() if p.duration is not None and p.started is not None]
        return max(ended, key=lambda p: (p.started or 0.0) + (p.duration or 0.0)).name if ended else None

    @property
    def time_to_ready(self) -> float | None:
        """Wall time from launch to the ready point (fold.time_to_ready)."""
        return fold.time_to_ready(self.ready_at, self.launched_at)

    @property
    def other_time(self) -> float | None:
        """Time to ready spent outside any phase (fold.other_time)."""
        return fold.other_time(self.offsets(), self.time_to_ready)

    @property
    def latency(self) -> dict[str, float]:
        """Steady latency per call: median, p90, min, max (s) and n."""
        steady = self.phases.get(STEADY)
        return steady.latency if steady is not None else {}

    @property
    def fed_batch(self) -> int:
        """The batch the model was fed: the setting, unless a signature fixed another."""
        first = next((i.fed_shape[0] for i in self.model.inputs if i.fed_shape and i.fed_shape[0] is not None), None)
        return first or self.config.batch

    @property
    def assumed_inputs(self) -> list[str]:
        """Inputs whose shape tflaunch had to assume (an unknown dimension nobody set)."""
        return [str(i.name) for i in self.model.inputs if i.assumed]

    @property
    def run_anatomy(self) -> Anatomy | None:
        """The anatomy naming this run (its history id), as every view's source line gives it."""
        return self.anatomy.of_run(self.history_id) if self.anatomy is not None else None

    def part_label(self, part: str) -> str:
        """A phase part as people read it: contexts name how many GPUs they were for."""
        label = PART_LABELS.get(part, part)
        gpus = self.settings.gpus
        if part == "contexts" and gpus:
            label += f" ({len(gpus)} GPU{'s' if len(gpus) > 1 else ''}, one call)"
        return label

    @property
    def first_call_overhead(self) -> float | None:
        """Seconds the first call took beyond a steady one (its median over >= 3 calls):
        the one-time work inside `first` (kernel loading, autotuning, compiling)."""
        first_phase = self.phases.get(self.ready_phase or "first")
        first, median = first_phase.duration if first_phase else None, self.latency.get("median")
        if first is None or median is None or self.latency.get("n", 0) < 3:
            return None
        return max(first - median, 0.0)

    @property
    def peak_rss(self) -> int | None:
        values = [p.peak_rss for p in self.phases.values() if p.peak_rss is not None]
        values += [rss for _, rss in self.samples]
        return max(values) if values else None

    @property
    def gpu_peaks(self) -> dict[int, int]:
        """The most GPU memory the process tree held on each device (NVML, bytes), by GPU index."""
        peaks: dict[int, int] = {}
        for _, used in self.gpu_samples:
            for gpu, size in used.items():
                peaks[gpu] = max(peaks.get(gpu, 0), size)
        return peaks

    @property
    def allocator_peaks(self) -> dict[int, int]:
        """TensorFlow's allocator peak per GPU (bytes), by the NVML index gpu_peaks uses.

        TensorFlow numbers the GPUs it can see: with visible GPUs set, its GPU:k is the k-th
        of them (CUDA's order; on a machine of one kind of card, NVML's too).
        """
        visible = self.config.visible_gpus
        peaks: dict[int, int] = {}
        for gpu in self.environment.gpus or ():
            peak, number = gpu.allocator_peak, (gpu.name or "").rsplit(":", 1)[-1]
            if peak and number.isdigit():
                k = int(number)
                peaks[visible[k] if visible is not None and k < len(visible) else k] = peak
        return peaks

    def offsets(self) -> dict[str, tuple[float, float]]:
        """(start, duration) of each finished phase in seconds since launch.

        Launch is the zero of every time axis (memory samples too). The OS's process
        start, which spawn is measured from, can read a tick before launch: clamp it.
        """
        spans = {}
        for name, phase in self.phases.items():
            if phase.started is not None and phase.duration is not None:
                spans[name] = (max(0.0, phase.started - self.launched_at), phase.duration)
        return spans

    def gaps(self) -> list[tuple[float, float]]:
        """(start, duration) of each stretch before ready when no phase ran: "other" time."""
        return fold.gaps(self.offsets(), self.time_to_ready)


def _size(line: str) -> int:
    return len(line.encode("utf-8", errors="replace"))
