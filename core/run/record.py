"""RunRecord: what one probe run did, built up from its events, stderr and exit."""

from __future__ import annotations

import signal
import time
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import psutil

from ..phases import AFTER_READY, LABELS, PART_LABELS, PHASES, UNTIL_PHASE
from ..settings.config import LaunchConfig
from ..units import format_bytes, format_duration
from . import events as ev
from .intervals import uncovered
from .program_outcome import last_error_line, reached_words, until_words

# What a run keeps of its child's stderr (for the history and the failure's excerpt): the
# last lines, and never more than STDERR_TAIL_BYTES together, however much was written.
STDERR_TAIL_LINES = 200
STDERR_TAIL_BYTES = 64 * 1024
STDERR_LINE_CHARS = 4096  # the session cuts longer lines as it reads them
# Signals a process dies of when memory runs out: the kernel's OOM killer sends SIGKILL;
# a failed allocation aborts (SIGABRT), and touching memory that cannot be backed ends in
# SIGSEGV or SIGBUS.
_OUT_OF_MEMORY_SIGNALS = {signal.SIGKILL, signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS}
_LARGE_PEAK = 0.7  # of physical memory: a peak this high makes out-of-memory likely
# What one run keeps of the names and points a program reports (OpenTelemetry's SpanLimits):
# more are counted as dropped, never stored.
MAX_PHASE_NAMES = 64
MAX_MARKS = 1000


class PhaseState(str, Enum):
    WAITING = "waiting"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class RunStatus(str, Enum):
    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed out"
    INTERRUPTED = "interrupted"  # the app died during the run; found so in the history


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


@dataclass
class Failure:
    kind: str
    message: str
    detail: str = ""


@dataclass
class RunRecord:
    config: LaunchConfig
    launched_at: float = field(default_factory=time.time)
    status: RunStatus = RunStatus.RUNNING
    # The phases the subject reported, in the order they started. A model run lists the
    # probe's seven from the start (waiting until reached); a program's appear as observed.
    phases: dict[str, PhaseRecord] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    imports: dict[str, Any] = field(default_factory=dict)  # the import X-ray (events.checked_imports)
    failure: Failure | None = None
    failed_phase: str | None = None
    exit_code: int | None = None
    exit_signal: int | None = None
    pid: int | None = None
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_TAIL_LINES))
    samples: list[tuple[float, int]] = field(default_factory=list)  # (s since launch, bytes)
    gpu_samples: list[tuple[float, dict[int, int]]] = field(default_factory=list)  # (s, {gpu: bytes})
    described: bool = False  # the probe's result arrived
    ready_at: float | None = None  # wall clock at the end of the first inference
    malformed_lines: int = 0
    heard_probe: bool = False  # at least one protocol event arrived: the child runs the probe
    finished_at: float | None = None
    history_id: int | None = None  # row in the run history, once stored
    command: list[str] | None = None  # set for a user's script launched with these settings
    launch_notes: list[str] = field(default_factory=list)  # what the launcher did first (a cache emptied, and why)
    launch_gpus: dict[str, Any] = field(default_factory=dict)  # NVML at launch (gpu_notes.launch_facts)
    marks: list[tuple[str, float]] = field(default_factory=list)  # a program's own points: (name, s since launch)
    stopped_at_ready: bool = False  # tflaunch ended the program at its ready point: not a failure
    dropped: int = 0  # phase names and marks over the caps, not kept
    _stderr_bytes: int = field(default=0, init=False, repr=False, compare=False)  # of stderr_tail, UTF-8

    def __post_init__(self) -> None:
        if not self.phases:
            names = ("spawn",) if self.is_program else self.model_phases
            self.phases = {p: PhaseRecord(p) for p in names}
        if self.command is None:
            self.phases["spawn"].state = PhaseState.RUNNING
            self.phases["spawn"].started = self.launched_at

    @property
    def is_program(self) -> bool:
        """The subject is the user's own program, observed by the launch hook."""
        return self.config.is_program and self.command is None

    @property
    def model_phases(self) -> tuple[str, ...]:
        """The probe's phases for this run: no trace when the model is called eagerly or
        through predict (--call), since the probe traces nothing then."""
        return PHASES if self.config.call == "function" else tuple(p for p in PHASES if p != "trace")

    @property
    def _ready_phases(self) -> tuple[str, ...]:
        return self.model_phases[:-1]

    @property
    def phase_order(self) -> list[str]:
        return list(self.phases)

    def phase(self, name: str) -> PhaseRecord | None:
        """The phase, if the subject reported it (or, for a model, will)."""
        return self.phases.get(name)

    @property
    def ready_phase(self) -> str | None:
        """The phase whose end is the ready point: the first inference of a model; for a
        program, what --until names (None for mark:NAME and exit)."""
        return UNTIL_PHASE.get(self.config.until) if self.is_program else "first"

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
    def is_script(self) -> bool:
        return self.command is not None

    @property
    def subject(self) -> str:
        """What the run was of: the model, the program, or the script for a script run."""
        if self.command is None:
            return self.config.subject
        script = next((part for part in self.command[1:] if not part.startswith("-")), self.command[0])
        return f"script: {script}"

    # -- feeding -----------------------------------------------------------------------
    def apply(self, event: ev.Event) -> None:
        self.heard_probe = True
        if isinstance(event, ev.Hello):
            self.pid = event.pid
            if event.process_age is not None:
                self.phases["spawn"].started = event.ts - event.process_age
        elif isinstance(event, ev.PhaseStart):
            started = self._named(event.phase)
            if started is not None:
                started.state, started.started = PhaseState.RUNNING, event.ts
                self._reorder()
        elif isinstance(event, ev.PhaseEnd):
            ended = self._named(event.phase)
            if ended is None:
                return
            phase = ended
            duration = event.duration
            if event.phase == "spawn" and event.ts > self.launched_at:
                # The OS's start time ticks at 10 ms and can read earlier than our launch;
                # the process cannot have started before we launched it.
                duration = min(duration, event.ts - self.launched_at)
            phase.state, phase.duration = PhaseState.DONE, duration
            phase.rss, phase.peak_rss, phase.latency = event.rss, event.peak_rss, dict(event.latency)
            phase.parts = dict(event.parts)
            phase.count = event.count
            if phase.started is None or event.phase == "spawn":
                phase.started = event.ts - duration
            if event.phase == self.ready_phase and self.ready_at is None:
                self.ready_at = event.ts
            self._reorder()
        elif isinstance(event, ev.Mark):
            if len(self.marks) >= MAX_MARKS:
                self.dropped += 1
                return
            self.marks.append((event.name, max(event.ts - self.launched_at, 0.0)))
            if self.is_program and self.config.until == f"mark:{event.name}" and self.ready_at is None:
                self.ready_at = event.ts
        elif isinstance(event, ev.InputsListed):
            # Kept with the model's description, so a run that fails later still shows them.
            self.model.update(declared_inputs=list(event.inputs), signature=event.signature,
                              signatures=list(event.signatures))
        elif isinstance(event, ev.SettingsApplied):
            self.settings = dict(event.applied)
        elif isinstance(event, ev.Result):
            self.environment, self.model = dict(event.environment), {**self.model, **event.model}
            if self.launch_gpus:
                self.environment["nvml"] = dict(self.launch_gpus)
            self.described = True
        elif isinstance(event, ev.ProbeError):
            self.failure = Failure(event.kind, event.message, event.detail)
            self.failed_phase = event.phase
        elif isinstance(event, ev.ImportsMeasured):
            self.imports = dict(event.imports)
        elif isinstance(event, ev.Progress):
            running = self.phases.get(event.phase)
            if running is not None:
                running.progress = (event.done, event.total)

    def add_stderr(self, line: str) -> None:
        # Lines from a session are cut already (with a note, hence the slack); this is for
        # lines that come another way, such as an older history's.
        if len(line) > STDERR_LINE_CHARS + 64:
            line = f"{line[:STDERR_LINE_CHARS]} … [line cut: {len(line) - STDERR_LINE_CHARS} more characters]"
        tail = self.stderr_tail
        if tail.maxlen is not None and len(tail) == tail.maxlen:
            self._stderr_bytes -= _size(tail[0])  # append will push it out
        tail.append(line)
        self._stderr_bytes += _size(line)
        while self._stderr_bytes > STDERR_TAIL_BYTES and len(tail) > 1:
            self._stderr_bytes -= _size(tail.popleft())

    def add_sample(self, at: float, rss: int, gpu: dict[int, int] | None = None) -> None:
        """A memory sample taken at wall-clock time `at`: process-tree RSS, GPU memory."""
        self.samples.append((at - self.launched_at, rss))
        if gpu:
            self.gpu_samples.append((at - self.launched_at, gpu))

    def finish(
        self,
        exit_code: int | None,
        exit_signal: int | None = None,
        *,
        cancelled: bool = False,
        timed_out: bool = False,
    ) -> None:
        """Close the run once the process is gone; decides status and the failed phase."""
        self.exit_code, self.exit_signal = exit_code, exit_signal
        self.finished_at = time.time()
        if self.is_script:
            self._finish_script(cancelled, timed_out)
            return
        if self.is_program:
            self._finish_program(cancelled, timed_out)
            return
        where = self.failed_phase or self.current_phase or "spawn"
        if cancelled:
            self.status = RunStatus.CANCELLED
            self._close_open_phase(where, PhaseState.CANCELLED)
            self.failed_phase = where
            return
        if timed_out:
            self.status = RunStatus.TIMED_OUT
            self.failure = Failure(
                "timeout",
                f"The run was stopped after {format_duration(self.config.timeout)} "
                f"(the timeout) while in phase {LABELS[where]}.",
            )
        elif self.failure is None and exit_code == 0 and self.described and self._all_reported():
            self.status = RunStatus.OK
            return
        else:
            self.status = RunStatus.FAILED
            if self.failure is None:
                self.failure = self._unexplained_end(where)
        self.failed_phase = where
        self._close_open_phase(where, PhaseState.FAILED)

    def _finish_program(self, cancelled: bool, timed_out: bool) -> None:
        where = self.current_phase
        if self.config.until == "exit" and self.exit_code == 0 and not (cancelled or timed_out):
            self.ready_at = self.finished_at
        if self.stopped_at_ready or (self.ready_at is not None and self.exit_code == 0 and not cancelled):
            self.status = RunStatus.OK
            for phase in self.phases.values():  # steady, cut short where the program stopped itself
                if phase.state is PhaseState.RUNNING:
                    phase.state = PhaseState.CANCELLED
            return
        self.failed_phase = where
        if cancelled:
            self.status = RunStatus.CANCELLED
        elif timed_out:
            self.status = RunStatus.TIMED_OUT
            self.failure = Failure("timeout", f"The program was stopped after {format_duration(self.config.timeout)} "
                                   f"(the timeout) before {until_words(self.config.until)} (--until); "
                                   f"{reached_words(where, 'import' in self.phases)}.")
        else:
            self.status = RunStatus.FAILED
            reached = reached_words(where, "import" in self.phases)
            if self.exit_signal:
                how = f"was killed by {_signal_name(self.exit_signal)}"
            elif self.exit_code == 0 and self.ready_at is not None:
                how = "exited with code 0"  # after ready: cancelled above, or never here
            else:
                how = f"exited with code {self.exit_code}"
            error = last_error_line(list(self.stderr_tail)) if self.exit_code else None
            self.failure = Failure(
                "program_failed" if self.exit_code or self.exit_signal else "not_ready",
                f"The program {how} before {until_words(self.config.until)} (--until); {reached}."
                + (f" Its last error: {error}" if error else "") + self._memory_hint(), self._stderr_excerpt())
        if where is not None:
            self._close_open_phase(where, PhaseState.CANCELLED if cancelled else PhaseState.FAILED)

    def _finish_script(self, cancelled: bool, timed_out: bool) -> None:
        if cancelled:
            self.status = RunStatus.CANCELLED
        elif timed_out:
            self.status = RunStatus.TIMED_OUT
            self.failure = Failure("timeout", f"The script was stopped after {format_duration(self.config.timeout)}.")
        elif self.exit_code == 0:
            self.status = RunStatus.OK
        else:
            self.status = RunStatus.FAILED
            how = (f"was killed by {_signal_name(self.exit_signal)}" if self.exit_signal
                   else f"exited with code {self.exit_code}")
            self.failure = Failure("script_failed", f"The script {how}.{self._memory_hint()}",
                                   self._stderr_excerpt())

    # -- reading -----------------------------------------------------------------------
    @property
    def current_phase(self) -> str | None:
        """The running phase, else the next one to run; None once all are done. A program's:
        the phase that started last and has not ended, else the last one reached."""
        if self.is_program:
            running = [n for n, p in self.phases.items() if p.state is PhaseState.RUNNING]
            ended = [p for p in self.phases.values() if p.duration is not None and p.started is not None]
            if running:
                return running[-1]
            return max(ended, key=lambda p: (p.started or 0.0) + (p.duration or 0.0)).name if ended else None
        for name in self.model_phases:
            if self.phases[name].state is PhaseState.RUNNING:
                return name
        for name in self.model_phases:
            if self.phases[name].state is PhaseState.WAITING:
                return name
        return None

    @property
    def time_to_ready(self) -> float | None:
        """Wall time from launch to the end of the first inference, by the clock both
        processes share: what a user with a stopwatch sees, work between phases included."""
        if self.is_program:
            return None if self.ready_at is None else max(self.ready_at - self.launched_at, 0.0)
        if self.ready_at is None or any(self.phases[p].duration is None for p in self._ready_phases):
            return None
        return max(self.ready_at - self.launched_at, 0.0)

    @property
    def other_time(self) -> float | None:
        """Time to ready spent outside any phase (generating inputs, Python between phases)."""
        ready = self.time_to_ready
        if ready is None:
            return None
        if self.is_program:
            return sum(duration for _, duration in self.gaps())
        return max(ready - sum(self.phases[p].duration or 0.0 for p in self._ready_phases), 0.0)

    @property
    def latency(self) -> dict[str, float]:
        """Steady latency per call: median, p90, min, max (s) and n."""
        steady = self.phases.get("steady")
        return steady.latency if steady is not None else {}

    @property
    def fed_batch(self) -> int:
        """The batch the model was fed: the setting, unless a signature fixed another."""
        shapes = [i.get("fed_shape") for i in self.model.get("inputs", []) if isinstance(i, dict)]
        first = next((s[0] for s in shapes if isinstance(s, list) and s and isinstance(s[0], int)), None)
        return first or self.config.batch

    @property
    def steady_line(self) -> str | None:
        """Steady latency per call with its batch size, or None when nothing was measured."""
        lat = self.latency
        if not lat.get("n") or lat.get("median") is None:
            return None
        if self.is_program:  # the program's own steps or calls, at the batch it chose
            unit = "step" if "first_step" in self.phases else "call"
            p90 = f"p90 {format_duration(lat['p90'])}, " if lat.get("p90") is not None else ""
            return f"median {format_duration(lat['median'])} per {unit} ({p90}{lat['n']} {unit}s)"
        batch = self.fed_batch
        text = f"median {format_duration(lat['median'])} per call"
        details = [f"p90 {format_duration(lat['p90'])}" if lat.get("p90") is not None else None,
                   f"{lat['n']} calls", f"batch {batch}"]
        if batch > 1:
            details.append(f"{format_duration(lat['median'] / batch)} per sample")
        return f"{text} ({', '.join(d for d in details if d)})"

    @property
    def assumed_inputs(self) -> list[str]:
        """Inputs whose shape tflaunch had to assume (an unknown dimension nobody set)."""
        return [str(i.get("name")) for i in self.model.get("inputs", []) if isinstance(i, dict) and i.get("assumed")]

    def _caveats(self) -> list[tuple[str, str]]:
        """(a few words for a status, a sentence a user can act on) for each thing that
        makes a finished run's figures doubtful."""
        out = []
        if self.assumed_inputs:
            out.append(("assumed input shape", f"Assumed input shape: {', '.join(self.assumed_inputs)} had unknown "
                        "dimensions nobody set; set them with --input NAME=SHAPE (the Inputs table in the app)."))
        if self.model.get("outputs_finite") is False:
            out.append(("outputs not finite", "The first inference returned NaN or infinite values: the inputs may "
                        "not suit the model (too small an image, out-of-range ids); set their shapes with --input."))
        return out

    @property
    def warnings(self) -> list[str]:
        return [sentence for _, sentence in self._caveats()]

    def part_label(self, part: str) -> str:
        """A phase part as people read it: contexts name how many GPUs they were for."""
        label = PART_LABELS.get(part, part)
        gpus = self.settings.get("gpus")
        if part == "contexts" and isinstance(gpus, list) and gpus:
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
    def notes(self) -> list[str]:
        """What the launcher did and what the GPUs mean for start-up: facts, not doubts."""
        from .gpu_notes import gpu_notes  # kernels' table only when a record is read

        program = []
        if self.is_program and self.finished_at is not None and "import" not in self.phases:
            program.append("The program never imported TensorFlow: tflaunch saw no TensorFlow phases (marks and "
                           "the time to ready still count).")
        if self.is_program and self.stopped_at_ready:
            program.append(f"tflaunch stopped the program at its ready point ({self.config.until}) after "
                           f"{self.latency.get('n', 0)} steady steps or calls, as --until asked: not a failure.")
        return [*self.launch_notes, *program, *gpu_notes(self.environment)]

    @property
    def inputs_line(self) -> str:
        """The inputs as fed, NAME=shape:dtype, with "assumed" where a default was used."""
        parts = []
        for i in self.model.get("inputs", []):
            if not isinstance(i, dict):
                continue
            shape = "x".join(str(d) for d in i.get("fed_shape") or []) or "scalar"
            parts.append(f"{i.get('name')}={shape}:{i.get('fed_dtype') or i.get('dtype')}"
                         + (" (assumed)" if i.get("assumed") else ""))
        return ", ".join(parts)

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
        for gpu in self.environment.get("gpus") or []:
            if not isinstance(gpu, dict):
                continue
            peak, number = gpu.get("allocator_peak"), str(gpu.get("name", "")).rsplit(":", 1)[-1]
            if isinstance(peak, int) and not isinstance(peak, bool) and peak > 0 and number.isdigit():
                k = int(number)
                peaks[visible[k] if visible is not None and k < len(visible) else k] = peak
        return peaks

    def offsets(self) -> dict[str, tuple[float, float]]:
        """(start, duration) of each finished phase in seconds since launch.

        Launch is the zero of every time axis (memory samples too). The OS's process
        start, which spawn is measured from, can read a tick before launch: clamp it.
        """
        if self.is_script:
            return {"script": (0.0, (self.finished_at or time.time()) - self.launched_at)}
        spans = {}
        for name, phase in self.phases.items():
            if phase.started is not None and phase.duration is not None:
                spans[name] = (max(0.0, phase.started - self.launched_at), phase.duration)
        return spans

    def gaps(self) -> list[tuple[float, float]]:
        """(start, duration) of each stretch before ready when no phase ran: "other" time."""
        spans = self.offsets()
        if self.is_program:
            ready = self.time_to_ready
            counted = [span for name, span in spans.items() if name not in AFTER_READY]
            return [] if ready is None else uncovered(counted, ready)
        if self.is_script or not all(p in spans for p in self._ready_phases):
            return []
        out, end = [], 0.0
        for name in self._ready_phases:
            start, duration = spans[name]
            if start - end > 1e-4:
                out.append((end, start - end))
            end = max(end, start + duration)
        ready = self.time_to_ready
        if ready is not None and ready - end > 1e-4:
            out.append((end, ready - end))
        return out

    @property
    def status_line(self) -> str:
        """A few words on where the run stands, for titles and big type."""
        if self.is_script:
            return self._script_status_line()
        if self.is_program and self.status is RunStatus.OK:
            point = "exit" if self.config.until == "exit" else self.config.until.replace("_", " ")
            stopped = ", then stopped" if self.stopped_at_ready else ""
            return f"Ready in {format_duration(self.time_to_ready)} (at {point}{stopped})"
        if self.status is RunStatus.OK:
            caveats = [words for words, _ in self._caveats()]
            return f"Ready in {format_duration(self.time_to_ready)}" + (f" ({'; '.join(caveats)})" if caveats else "")
        if self.status is RunStatus.RUNNING:
            return f"Running: {LABELS[self.current_phase or ('spawn' if self.is_program else 'steady')]}"
        if self.status is RunStatus.CANCELLED:
            return f"Cancelled during {LABELS[self.failed_phase or 'spawn']}"
        if self.status is RunStatus.INTERRUPTED:
            return "Interrupted: tflaunch stopped during this run"
        verb = "Timed out" if self.status is RunStatus.TIMED_OUT else "Failed"
        return f"{verb} in {LABELS[self.failed_phase or 'spawn']}"

    def _script_status_line(self) -> str:
        took = format_duration((self.finished_at or time.time()) - self.launched_at)
        return {RunStatus.RUNNING: "Running script", RunStatus.OK: f"Script finished in {took}",
                RunStatus.CANCELLED: "Script cancelled", RunStatus.TIMED_OUT: "Script timed out",
                RunStatus.INTERRUPTED: "Interrupted: tflaunch stopped during this script"
                }.get(self.status, "Script failed")

    @property
    def environment_line(self) -> str:
        """TensorFlow, Python, CPU, GPUs and driver in one line; what is unknown is left out."""
        env = self.environment
        if not env:
            return "not reported (the run ended before the probe described it)"
        gpus = ", ".join(g.get("model") or g.get("name", "") for g in env.get("gpus", [])) or "no GPU"
        parts = [f"{name} {env[key]}" for name, key in (("TensorFlow", "tensorflow"), ("Keras", "keras"),
                                                         ("Python", "python")) if env.get(key)]
        if env.get("cpu"):
            parts.append(f"{env['cpu']} ({env['cores']} cores)" if env.get("cores") else env["cpu"])
        parts.append(gpus)
        if env.get("driver"):
            parts.append(f"driver {env['driver']}")
        return ", ".join(parts)

    @property
    def headline(self) -> str:
        """One line a user can act on: how the run ended and, if it failed, why."""
        if self.failure is not None and self.status in (RunStatus.FAILED, RunStatus.TIMED_OUT):
            return f"{self.status_line}: {self.failure.message}"
        return self.status_line

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": {"kind": "program" if self.is_program else "model", "spec": self.config.subject,
                        **({"until": self.config.until, "workdir": self.config.workdir or None}
                           if self.is_program else {"call": self.config.call})},
            "stopped_at_ready": self.stopped_at_ready,
            "config": self.config.to_dict(),
            "launched_at": self.launched_at,
            "status": self.status.value,
            "time_to_ready": self.time_to_ready,
            "other_time": self.other_time,
            "assumed_input_shape": bool(self.assumed_inputs),
            "warnings": self.warnings,
            "notes": self.notes,
            "steady_per_call": {**self.latency, "batch": self.fed_batch} if self.latency.get("n") else None,
            "peak_rss": self.peak_rss,
            "gpu_peaks": {str(gpu): size for gpu, size in sorted(self.gpu_peaks.items())},
            "allocator_peaks": {str(gpu): size for gpu, size in sorted(self.allocator_peaks.items())},
            "phases": {
                name: {"state": p.state.value, "duration": p.duration, "rss": p.rss,
                       "peak_rss": p.peak_rss, **({"latency": p.latency} if p.latency else {}),
                       **({"parts": p.parts} if p.parts else {}),
                       **({"count": p.count} if p.count is not None else {})}
                for name, p in self.phases.items()
            },
            "marks": [{"name": name, "at": at} for name, at in self.marks],
            "settings": self.settings,
            "environment": self.environment,
            "model": self.model,
            "imports": self.imports,
            "failure": None if self.failure is None else {
                "kind": self.failure.kind, "phase": self.failed_phase,
                "message": self.failure.message, "detail": self.failure.detail},
            "exit_code": self.exit_code,
            "exit_signal": self.exit_signal,
            "malformed_lines": self.malformed_lines,
            "stderr_tail": list(self.stderr_tail)[-20:],
        }

    # -- helpers -----------------------------------------------------------------------
    def _close_open_phase(self, where: str, state: PhaseState) -> None:
        phase = self.phases[where]
        if phase.state in (PhaseState.RUNNING, PhaseState.WAITING):
            if phase.started is not None and phase.duration is None and phase.state is PhaseState.RUNNING:
                phase.duration = max(0.0, (self.finished_at or time.time()) - phase.started)
            phase.state = state

    def _all_reported(self) -> bool:
        return all(p.state is PhaseState.DONE for p in self.phases.values())

    def _unexplained_end(self, where: str) -> Failure:
        """Why a run failed that the probe did not explain itself."""
        skipped = self.malformed_lines
        if not self.heard_probe and not self.exit_signal:
            printed = f", and printed {skipped} line(s) that are not probe events" if skipped else ""
            return Failure("no_probe", f"{self.config.python} exited with code {self.exit_code} without starting "
                           f"tflaunch's probe (it never sent the probe's first line{printed}): it is not a Python "
                           "interpreter, or not one that can run the probe. Choose the Python 3 executable of an "
                           "environment with TensorFlow (--python; Interpreter in the app).", self._stderr_excerpt())
        if self.exit_code == 0 and self.described:
            return Failure("protocol", f"The probe finished, but phase {LABELS[where]} never reported a usable end "
                           f"({skipped} line(s) were skipped as malformed or out of range, such as a duration "
                           "that is no plausible number of seconds), so the run cannot be counted. Check that "
                           "nothing else writes to the probe's output (a wrapper around --python, a "
                           "sitecustomize) and run again.", self._stderr_excerpt())
        return Failure("crash", self._exit_description(where), self._stderr_excerpt())

    def _exit_description(self, where: str) -> str:
        if self.exit_signal:
            how = f"was killed by {_signal_name(self.exit_signal)}"
        elif self.exit_code == 0:
            how = "exited before reporting a result"
        else:
            how = f"exited with code {self.exit_code}"
        return f"The probe process {how} during phase {LABELS[where]}.{self._memory_hint()}"

    def _memory_hint(self) -> str:
        """For a death by a signal that running out of memory sends: that it may have, and
        how close the run came. Cancel and timeout never get here: tflaunch sent no signal."""
        if self.exit_signal not in _OUT_OF_MEMORY_SIGNALS:
            return ""
        peak, total = self.peak_rss, _physical_memory()
        figures = f"peak memory was {format_bytes(peak)} of {format_bytes(total)}" if peak and total else ""
        advice = ("Try a smaller model or batch, or close other programs; "
                  "`journalctl -k` (or dmesg) says whether the kernel killed it.")
        if self.exit_signal == signal.SIGKILL:
            return (" tflaunch did not send it: that is most often the kernel's out-of-memory killer"
                    f"{f' ({figures})' if figures else ''}. {advice}")
        if peak and total and peak >= _LARGE_PEAK * total:
            return f" It may have run out of memory: {figures}. {advice}"
        return ""

    def _stderr_excerpt(self, lines: int = 12) -> str:
        return "\n".join(list(self.stderr_tail)[-lines:])


def _physical_memory() -> int | None:
    try:
        return int(psutil.virtual_memory().total)
    except (OSError, RuntimeError, AttributeError):
        return None


def _size(line: str) -> int:
    return len(line.encode("utf-8", errors="replace"))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
