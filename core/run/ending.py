"""How a run ends: its status, the phase it failed in, and the reason in words.

A model run ends when the probe says so; a program run where the user said (--until).
Each failure names the phase, the cause and what to try.
"""

from __future__ import annotations

import signal
import time

import psutil

from ..phases import IMPORT, label, model_phases, step_unit
from ..units import format_bytes, format_duration
from . import fold
from .program_outcome import (
    NOT_OBSERVABLE,
    last_error_line,
    reached_words,
    stdin_hint,
    unseen_words,
    until_hint,
    until_words,
)
from .record_data import Failure, RecordData
from .status import PhaseState, RunStatus

# Signals a process dies of when memory runs out: the kernel's OOM killer sends SIGKILL;
# a failed allocation aborts (SIGABRT), and touching memory that cannot be backed ends in
# SIGSEGV or SIGBUS.
_OUT_OF_MEMORY_SIGNALS = {signal.SIGKILL, signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS}
_LARGE_PEAK = 0.7  # of physical memory: a peak this high makes out-of-memory likely


def end_run(
    record: RecordData,
    exit_code: int | None,
    exit_signal: int | None = None,
    *,
    cancelled: bool = False,
    timed_out: bool = False,
) -> None:
    """Close the run once the process is gone; decides status and the failed phase."""
    record.exit_code, record.exit_signal = exit_code, exit_signal
    record.finished_at = time.time()
    if record.is_program:
        _finish_program(record, cancelled, timed_out)
        return
    # Every phase reported (the probe was describing the model, or exiting): the run
    # stopped after its last one, never "in spawn".
    where = record.failed_phase or record.current_phase or model_phases(record.config.call)[-1]
    if cancelled:
        record.status = RunStatus.CANCELLED
        _close_open_phase(record, where, PhaseState.CANCELLED)
        record.failed_phase = where
        return
    if timed_out:
        record.status = RunStatus.TIMED_OUT
        record.failure = Failure("timeout", _timeout_words(record, where))
    elif record.failure is None and exit_code == 0 and record.described and _all_reported(record):
        record.status = RunStatus.OK
        return
    else:
        record.status = RunStatus.FAILED
        if record.failure is None:
            record.failure = _unexplained_end(record, where)
    record.failed_phase = where
    _close_open_phase(record, where, PhaseState.FAILED)


def _finish_program(record: RecordData, cancelled: bool, timed_out: bool) -> None:
    if record.failure is not None and record.pid is None:  # refused or failed to start: said already
        record.status = RunStatus.FAILED
        return
    where = record.current_phase
    if record.exit_code == 0 and not (cancelled or timed_out) and record.ready_at is None \
            and fold.is_ready_point(True, record.config.until, "exit"):
        record.ready_at = record.finished_at
    if record.stopped_at_ready or (record.ready_at is not None and record.exit_code == 0 and not cancelled):
        record.status = RunStatus.OK
        for phase in record.phases.values():  # steady, cut short where the program stopped itself
            if phase.state is PhaseState.RUNNING:
                phase.state = PhaseState.CANCELLED
        return
    record.failed_phase = where
    if record.failure is not None and record.failure.kind == NOT_OBSERVABLE and not (cancelled or timed_out):
        # The observer refused the run at an import it cannot watch: its words are the reason.
        record.status = RunStatus.FAILED
        if where is not None:
            _close_open_phase(record, where, PhaseState.FAILED)
        return
    done = {name for name, phase in record.phases.items() if phase.state is PhaseState.DONE}
    hint = until_hint(record.config.until, done, [name for name, _ in record.marks])
    if cancelled:
        record.status = RunStatus.CANCELLED
    elif timed_out and record.ready_at is not None:
        record.status = RunStatus.TIMED_OUT
        record.failure = Failure("timeout", _program_timeout_after_ready(record, where))
    elif timed_out:
        record.status = RunStatus.TIMED_OUT
        record.failure = Failure("timeout", f"The program was stopped after {format_duration(record.config.timeout)} "
                               f"(the timeout) before {until_words(record.config.until)} (--until); "
                               f"{reached_words(where, IMPORT in record.phases)}.{hint}")
    else:
        record.status = RunStatus.FAILED
        reached = reached_words(where, IMPORT in record.phases)
        if record.exit_signal:
            how = f"was killed by {_signal_name(record.exit_signal)}"
        elif record.exit_code == 0 and record.ready_at is not None:
            how = "exited with code 0"  # after ready: cancelled above, or never here
        else:
            how = f"exited with code {record.exit_code}"
        error = last_error_line(list(record.stderr_tail)) if record.exit_code else None
        if record.exit_code == 0 and not record.exit_signal and IMPORT in record.phases:
            # It ran to its end: whether it trained or inferred in a way tflaunch cannot see is
            # not known, so nothing is claimed about what it did "before".
            words = f"The program exited with code 0, and tflaunch saw no {unseen_words(record.config.until)}; " \
                    f"{reached}."
        else:
            words = f"The program {how} before {until_words(record.config.until)} (--until); {reached}."
        record.failure = Failure(
            "program_failed" if record.exit_code or record.exit_signal else "not_ready",
            words + (f" Its last error: {error}" + stdin_hint(error) if error else hint) + _memory_hint(record),
            record.stderr_excerpt())
    if where is not None:
        _close_open_phase(record, where, PhaseState.CANCELLED if cancelled else PhaseState.FAILED)


def _timeout_words(record: RecordData, where: str) -> str:
    """Why a model run timed out: in which phase, or that its phases had all ended."""
    limit = format_duration(record.config.timeout)
    if not _all_reported(record):
        return f"The run was stopped after {limit} (the timeout) while in phase {label(where)}."
    if not record.described:
        return (f"The probe ended its last phase ({label(where)}) but did not report its result within {limit} "
                "(the timeout), so tflaunch stopped it while it was describing the model. Raise --timeout if "
                "the model is that slow to describe; otherwise its log's last lines may say where it hung.")
    return (f"The probe reported every phase and its result but did not exit within {limit} (the timeout), so "
            "tflaunch stopped it. Its figures are complete; something kept the child alive at exit (a thread "
            "that never ends, background work of a module given with --import). Its log's last lines may say "
            "what; raise --timeout if exiting really takes that long.")


def _program_timeout_after_ready(record: RecordData, where: str | None) -> str:
    """A program that reached its ready point, then timed out before its steady steps were done."""
    unit = step_unit(record.phases) + "s"
    during = f" in {label(where)}" if where else ""
    return (f"The program reached {until_words(record.config.until)} (--until) after "
            f"{format_duration(record.time_to_ready)}, but its {record.config.steady} steady {unit} were not "
            f"done within {format_duration(record.config.timeout)} (the timeout), so tflaunch stopped it{during}. "
            "Its time to ready stands; ask for fewer (--steady) or raise --timeout.")


def _close_open_phase(record: RecordData, where: str, state: PhaseState) -> None:
    """The phase the run ended in, failed or cancelled; one it never reached stays absent."""
    phase = record.phases.get(where)
    if phase is not None and phase.state in (PhaseState.RUNNING, PhaseState.WAITING):
        if phase.started is not None and phase.duration is None and phase.state is PhaseState.RUNNING:
            phase.duration = max(0.0, (record.finished_at or time.time()) - phase.started)
        phase.state = state


def _all_reported(record: RecordData) -> bool:
    """Every phase the probe reports for this model ended, and no other is left open."""
    return all(p.state is PhaseState.DONE for p in record.phases.values()) \
        and all(name in record.phases for name in model_phases(record.config.call))


def _unexplained_end(record: RecordData, where: str) -> Failure:
    """Why a run failed that the probe did not explain itself."""
    skipped = record.malformed_lines
    if not record.heard_probe and not record.exit_signal:
        printed = f", and printed {skipped} line(s) that are not probe events" if skipped else ""
        return Failure("no_probe", f"{record.config.python} exited with code {record.exit_code} without starting "
                       f"tflaunch's probe (it never sent the probe's first line{printed}): it is not a Python "
                       "interpreter, or not one that can run the probe. Choose the Python 3 executable of an "
                       "environment with TensorFlow (--python; Interpreter in the app).", record.stderr_excerpt())
    if record.exit_code == 0 and record.described:
        return Failure("protocol", f"The probe finished, but phase {label(where)} never reported a usable end "
                       f"({skipped} line(s) were skipped as malformed or out of range, such as a duration "
                       "that is no plausible number of seconds), so the run cannot be counted. Check that "
                       "nothing else writes to the probe's output (a wrapper around --python, a "
                       "sitecustomize) and run again.", record.stderr_excerpt())
    return Failure("crash", _exit_description(record, where), record.stderr_excerpt())


def _exit_description(record: RecordData, where: str) -> str:
    if record.exit_signal:
        how = f"was killed by {_signal_name(record.exit_signal)}"
    elif record.exit_code == 0:
        how = "exited before reporting a result"
    else:
        how = f"exited with code {record.exit_code}"
    when = f"during phase {label(where)}"
    # Every phase had ended: it died before its result.
    if (phase := record.phases.get(where)) is not None and phase.state is PhaseState.DONE:
        when = f"after its last phase ({label(where)}), before its result"
    return f"The probe process {how} {when}.{_memory_hint(record)}"


def _memory_hint(record: RecordData) -> str:
    """For a death by a signal that running out of memory sends: that it may have, and
    how close the run came. Cancel and timeout never get here: tflaunch sent no signal."""
    if record.exit_signal not in _OUT_OF_MEMORY_SIGNALS:
        return ""
    peak, total = record.peak_rss, _physical_memory()
    figures = f"peak memory was {format_bytes(peak)} of {format_bytes(total)}" if peak and total else ""
    advice = ("Try a smaller model or batch, or close other programs; "
              "`journalctl -k` (or dmesg) says whether the kernel killed it.")
    if record.exit_signal == signal.SIGKILL:
        return (" tflaunch did not send it: that is most often the kernel's out-of-memory killer"
                f"{f' ({figures})' if figures else ''}. {advice}")
    if peak and total and peak >= _LARGE_PEAK * total:
        return f" It may have run out of memory: {figures}. {advice}"
    return ""


def _physical_memory() -> int | None:
    try:
        return int(psutil.virtual_memory().total)
    except (OSError, RuntimeError, AttributeError):
        return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
