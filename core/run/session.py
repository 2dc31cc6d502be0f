"""ProbeSession: one child run, folded from its bytes, samples, deadline and exit into a RunRecord.

Sans-IO (as h11 or wsproto): the session never starts, reads or kills anything. A driver
does the I/O and tells the session what happened; the session says what that meant.
The CLI's driver is a selectors loop (driver.py), the app's a QProcess
(tflaunch.gui.adapters.probe_process); both use this one class, so they cannot drift apart.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ..phases import SPAWN
from ..probe.anatomy import KEEP_ENV as ANATOMY_LOGDIR_ENV
from ..probe.anatomy import LOG_FOLDER_ENV
from ..settings import cache_pack
from ..settings.child import probe_command
from ..settings.config import LaunchConfig
from . import events as ev
from .environment import launch_environment, pack_for, prepare_caches
from .events import EventParser
from .gpus.gpu_notes import launch_facts
from .gpus.nvml import machine_gpus
from .line_buffer import LineBuffer
from .pack_hits import PackHits
from .process_tree import RUN_MARKER_ENV, run_marker
from .program import EVENTS_FD_ENV, OBSERVE_ENV, normal_subject, observe_settings, program_argv
from .record import STDERR_LINE_CHARS, Failure, RunRecord
from .run_kind import ANATOMY_NOTE
from .storage.eviction import PageCacheReport
from .storage.eviction import prepare as prepare_page_cache
from .warm.warm_facts import WarmStart
from .warm.warm_start import CHILD_LINE, COLD_END, COLD_LINE, SERVER_LINE, client_command
from .warmup_report import WarmupReport
from .watcher import Output
from .words import COLD_MARK, WARM_MARK

SAMPLE_INTERVAL_S = 1 / 15  # the command line's driver; the app samples on a thread of its own, at 25 Hz
# Per line of the child's log: one runaway write (a 50 MB line) costs neither memory nor the
# app's event loop; the record keeps a bounded tail of these (record.STDERR_TAIL_BYTES).
STDERR_LINE_CAP = STDERR_LINE_CHARS


def _seconds(text: str) -> float | None:
    """A duration a child wrote; None when it is not one (then only the fact is kept)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0.0 <= value < 1e6 else None


class StartedTogether:
    """Sessions of one trial, started at once (--instances): the page cache is made cold
    once, before the first of them, so that no instance evicts what another has read."""

    def __init__(self, sessions: list[ProbeSession]) -> None:
        self._done = False
        self._report: PageCacheReport | None = None
        self._config = sessions[0].record.config if sessions else None
        for session in sessions:
            session.shared = self

    def page_cache(self) -> PageCacheReport | None:
        if not self._done and self._config is not None:
            self._report, self._done = prepare_page_cache(self._config), True
        return self._report


def start_together(sessions: list[ProbeSession]) -> None:
    """Mark `sessions` as one trial's instances (they share one eviction)."""
    if len(sessions) > 1:
        StartedTogether(sessions)




class ProbeSession:
    def __init__(self, config: LaunchConfig, *, command: list[str] | None = None,
                 base_env: Mapping[str, str] | None = None, warm: bool = False, launcher: list[str] | None = None,
                 anatomy: bool = False, child: list[str] | None = None, keep_trace: str | None = None) -> None:
        """`warm` (a program): forked from a warm server (cold, saying why, when it cannot be);
        `anatomy`: an extra run with TensorFlow's profiler on, whose first step or first
        call comes back in parts (probe/anatomy.py); never a measured run.
        `keep_trace`: with `anatomy`, the folder the profiler writes its log to and leaves
        there (TensorBoard's layout below it), instead of a temporary one removed once read.
        `command`: replaces the probe's argv (tests stand in a misbehaving child).
        `child`: the argv of one of the probe's other modes, which measures nothing (the
        serving warm-up file's writer, the format conversion): started, timed out, cancelled
        and read as a run's child, with no page-cache preparation; the warm-up writer's
        answer is kept, not applied, and a conversion's `saved` events reach the driver's watcher.
        `launcher`: a program's launch as a user types it, a tflaunch command that applies the
        settings itself (`tflaunch run --warm --profile NAME -- python SCRIPT`, the doctor's
        advice): it gets our environment and the observation's variables, not the settings."""
        self.record = RunRecord(normal_subject(config))  # the app's configs too: one reading of a command line
        self._command, self._base_env = command, base_env
        self._launcher = launcher
        self._child = child
        self.warmup_answer: WarmupReport | None = None  # a serving warm-up child's answer
        self.probe_error: ev.ProbeError | None = None  # the child's own first word of failure
        self._bad_answer = False
        # A program subject: its events come on a pipe of their own, which the driver makes
        # (and a warm client hands on to the forked program).
        self.observes = self.record.is_program
        self._events = LineBuffer()
        self._stop_asked = False
        self.warm = warm and self.observes
        if self.warm:
            self.record.warm_start = WarmStart()
        self.anatomy = anatomy
        self.keep_trace = keep_trace if anatomy else None
        self._anatomy_dir: str | None = None
        self.warm_child: int | None = None  # the warm-started script's pid, once the client says it
        self._parser = EventParser()
        # A program's stdout is its own output: a log, not events.
        self._stdout = LineBuffer(max_line=STDERR_LINE_CAP) if self.observes else LineBuffer()
        self._stderr = LineBuffer(max_line=STDERR_LINE_CAP)
        self.deadline: float | None = None  # monotonic
        self.cancelled = self.timed_out = False
        self.marker = run_marker()  # in the child's environment: finds what it leaves behind
        self.shared: StartedTogether | None = None  # instances started together: one eviction for all
        self.pack: PackHits | None = None  # the cache pack the child reads, and what it gave

    @property
    def malformed_answer(self) -> bool:
        """The child's answer came, but did not pass its checks."""
        return self._bad_answer

    @property
    def done(self) -> bool:
        return self.record.finished_at is not None

    def refuse(self, field_name: str, message: str) -> RunRecord:
        """End the run before it starts: a setting the launch check refused."""
        phase = "spawn" if field_name in ("python", "program") or self.observes else "load"
        self.record.failure = Failure(f"invalid_{field_name}", message)
        self.record.failed_phase = phase
        self.record.finish(None)
        return self.record

    def launch(self, wall: float, monotonic: float) -> tuple[list[str], dict[str, str]]:
        """Time zero of the run; the argv and the complete environment to exec."""
        record = self.record
        before = time.monotonic()
        # Cache folders are made ready (a cold one emptied, which can take seconds for
        # gigabytes of kernels) before time zero: that is tflaunch's work, not the run's.
        record.launch_notes = [*([ANATOMY_NOTE] if self.anatomy else []),
                               *prepare_caches(record.config, self._base_env)]
        if self._launcher is None and self._command is None and (pack := pack_for(record.config, self._base_env)):
            self.pack = PackHits(str(pack[0]), pack[1], before=cache_pack.snapshot(pack[0]))
            self.pack.read = 0 if not pack[1] and cache_pack.mark_unread(pack[0]) else None
        record.launch_gpus = launch_facts(machine_gpus())
        # A cold page cache is made here, the one place every launcher shares, after the
        # other preparations so that nothing read after it warms the files again.
        if self._child is None:
            self._prepare_page_cache()
        spent = time.monotonic() - before
        wall, monotonic = wall + spent, monotonic + spent
        record.launched_at = wall
        record.phases[SPAWN].started = wall
        self.deadline = monotonic + record.config.timeout
        subject = program_argv(record.config) if self.observes else None
        argv = (self._command or self._child or self._launcher or subject
                or probe_command(record.config, wall, anatomy=self.anatomy))
        if self.warm and self._command is None and self._launcher is None:
            argv = client_command(record.config.python, subject or [], os.getpid())
        if self._launcher is not None:  # the launcher applies the settings; the hook would observe it, not the program
            env = dict(os.environ if self._base_env is None else self._base_env)
        else:
            env = launch_environment(record.config, self._base_env,
                                     launch_hook=self.observes)
        env[RUN_MARKER_ENV] = self.marker
        if self.observes:
            env[OBSERVE_ENV] = observe_settings(record.config, anatomy=self.anatomy)
        if self.anatomy:  # the trace's folder is tflaunch's: made here, removed when the run ends
            self._anatomy_dir = tempfile.mkdtemp(prefix="tflaunch-anatomy-")
            env[LOG_FOLDER_ENV] = self._anatomy_dir
        if self.keep_trace is not None:  # bench --tensorboard: the profiler's log kept there instead
            env[ANATOMY_LOGDIR_ENV] = self.keep_trace
        return argv, env

    def _prepare_page_cache(self) -> None:
        report = self.shared.page_cache() if self.shared is not None else prepare_page_cache(self.record.config)
        if report is not None:
            self.record.page_cache = report
            self.record.launch_notes += report.sentences()

    @property
    def cwd(self) -> str | None:
        """The folder the child starts in: a program's working folder, else ours."""
        folder = self.record.config.workdir if self.observes else ""
        return os.path.expanduser(folder) if folder else None

    def events_fd_env(self, fd: int) -> dict[str, str]:
        """The variable that tells the launch hook which inherited descriptor is its channel."""
        return {EVENTS_FD_ENV: str(fd)}

    def events(self, data: bytes) -> Output:
        """Bytes from a program's event channel (the launch hook's pipe)."""
        return self._event_lines(self._events.feed(data))

    def _event_lines(self, lines: list[str]) -> Output:
        out = Output()
        for line in lines:
            event = self._parser.parse(line)
            if event is not None:
                self.record.apply(event)
                out.events.append(event)
        out.stop = self._ready_to_stop()
        return out

    def _ready_to_stop(self) -> bool:
        """True once, when a program has reached its ready point and its steady steps."""
        record, config = self.record, self.record.config
        if not self.observes or self._stop_asked or self.done or config.until == "exit" or record.ready_at is None:
            return False
        # The observer says when steady state is over: measured, or nothing to measure.
        if config.steady > 0 and not record.steady_ended:
            return False
        if self.anatomy and record.anatomy is None:
            return False  # the observer reads its trace at the ready point: stopped then, it would lose it
        self._stop_asked = True
        return True

    def stopping(self) -> None:
        """The driver is ending the program at its ready point: that is success."""
        self.record.stopped_at_ready = True

    def failed_to_start(self, message: str) -> RunRecord:
        self._remove_anatomy_dir()
        self.record.failure = Failure("spawn_failed", message)
        self.record.failed_phase = "spawn"
        self.record.finish(None)
        return self.record

    def started(self, pid: int) -> None:
        self.record.pid = pid

    # -- the child's output ----------------------------------------------------------------
    def stdout(self, data: bytes) -> Output:
        return self._stdout_lines(self._stdout.feed(data))

    def stderr(self, data: bytes) -> Output:
        return self._stderr_lines(self._stderr.feed(data))

    def _stdout_lines(self, lines: list[str]) -> Output:
        if self.observes:  # a program's stdout is its own output, not events
            return self._stderr_lines(lines)
        out = Output()
        for line in lines:
            event = self._parser.parse(line)
            if event is None:
                self._bad_answer = self._bad_answer or (self._child is not None and '"serving_warmup"' in line)
                continue
            if self.record.described:
                # The probe's result is its last word (it exits right after), so whatever
                # follows was written by something else: noted, never applied. Decided here,
                # once, so a run reads the same whichever driver read it and however late
                # the event came.
                self.record.ignore_late(event)
                continue
            if isinstance(event, ev.ServingWarmupAnswered):
                self.warmup_answer = event.report
                continue
            if isinstance(event, ev.ProbeError) and self.probe_error is None:
                self.probe_error = event
            self.record.apply(event)
            out.events.append(event)
        return out

    def _stderr_lines(self, lines: list[str]) -> Output:
        for line in lines:
            if self.warm and line.startswith(CHILD_LINE) and line[len(CHILD_LINE):].strip().isdigit():
                self.warm_child = int(line[len(CHILD_LINE):])
                self._start_kind(WARM_MARK)
            elif self.warm and line.startswith(COLD_LINE):
                self._start_kind(COLD_MARK)  # asked warm, started cold: the line says why
                facts = self.record.warm_start or WarmStart()
                if facts.cold_because is None:  # the first reason it gave
                    self.record.warm_start = replace(facts, cold_because=line[len(COLD_LINE):].removesuffix(COLD_END))
            elif self.warm and line.startswith(SERVER_LINE):
                self.record.warm_start = replace(self.record.warm_start or WarmStart(), server_started=True,
                                                 server_import_s=_seconds(line[len(SERVER_LINE):].split(" s ", 1)[0]))
            if self.pack is not None:
                self.pack.feed(line)
            self.record.add_stderr(line)
        return Output(log=lines)

    def _start_kind(self, mark: str) -> None:
        """How a launch asked to start warm did start, kept as a mark of the run (stored with
        it: History and the headline say warm or cold). A program observed warm marks it itself."""
        if not any(name in (WARM_MARK, COLD_MARK) for name, _ in self.record.marks):
            self.record.marks.append((mark, max(time.time() - self.record.launched_at, 0.0)))

    # -- the clock -------------------------------------------------------------------------
    def sample(self, wall: float, rss: int, gpu: Mapping[int, int] | None = None) -> None:
        self.record.add_sample(wall, rss, dict(gpu or {}))

    def expired(self, monotonic: float) -> bool:
        """True once, when the deadline has passed: the driver then ends the process group."""
        if self.deadline is None or self.done or self.timed_out or self.cancelled or monotonic < self.deadline:
            return False
        self.timed_out = True
        return True

    def cancel(self) -> bool:
        """The user asked to stop; True if the driver should end the process group."""
        if self.done or self.cancelled:
            return False
        self.cancelled = True
        return True

    # -- the end ---------------------------------------------------------------------------
    def exited(self, exit_code: int | None, exit_signal: int | None) -> tuple[RunRecord, Output]:
        """The process is gone: the rest of its output, then the record's end."""
        self._remove_anatomy_dir()
        out = self._stdout_lines(self._stdout.flush())
        out.extend(self._stderr_lines(self._stderr.flush()))
        if self.observes:
            out.events.extend(self._event_lines(self._events.flush()).events)
        if self.pack is not None and not self.done:
            pack, folder = self.pack, Path(self.pack.folder)
            pack.after = cache_pack.snapshot(folder)
            pack.read = None if pack.read is None else cache_pack.read_since_marked(folder)
            if not pack.read_only:  # its new entries noted, so a later start can tell them damaged
                pack.after = cache_pack.record_run(folder, pack.hits, pack.misses)
            self.record.cache_pack = pack.facts()
        if not self.done:
            self.record.malformed_lines = self._parser.malformed + self._parser.unknown
            self.record.finish(exit_code, exit_signal, cancelled=self.cancelled, timed_out=self.timed_out)
        return self.record, out

    def _remove_anatomy_dir(self) -> None:
        if self._anatomy_dir is not None:
            shutil.rmtree(self._anatomy_dir, ignore_errors=True)
            self._anatomy_dir = None
