"""A run in words: its status line, headline, steady latency, caveats and notes.

The record holds the figures (record.py); these are the sentences every view, the CLI and
the review images show, so a run reads the same everywhere.
"""

from __future__ import annotations

from ..phases import IMPORT, label, step_unit
from ..units import format_bytes, format_duration
from . import events as ev
from .pack_hits import anatomy_sentence, pack_sentence
from .program_outcome import until_words
from .record_data import RecordData
from .status import PhaseState, RunStatus


def steady_line(record: RecordData) -> str | None:
    """Steady latency per call with its batch size, or None when nothing was measured."""
    lat = record.latency
    if not lat.get("n") or lat.get("median") is None:
        return None
    if record.is_program:  # the program's own steps or calls, at the batch it chose
        unit = step_unit(record.phases)
        p90 = f"p90 {format_duration(lat['p90'])}, " if lat.get("p90") is not None else ""
        return f"median {format_duration(lat['median'])} per {unit} ({p90}{lat['n']} {unit}s)"
    batch = record.fed_batch
    text = f"median {format_duration(lat['median'])} per call"
    details = [f"p90 {format_duration(lat['p90'])}" if lat.get("p90") is not None else None,
               f"{lat['n']} calls", f"batch {batch}"]
    if batch > 1:
        details.append(f"{format_duration(lat['median'] / batch)} per sample")
    return f"{text} ({', '.join(d for d in details if d)})"


def caveats(record: RecordData) -> list[tuple[str, str]]:
    """(a few words for a status, a sentence a user can act on) for each thing that
    makes a finished run's figures doubtful."""
    out = []
    if record.assumed_inputs:
        out.append(("assumed input shape", f"Assumed input shape: {', '.join(record.assumed_inputs)} had unknown "
                    "dimensions nobody set; set them with --input NAME=SHAPE (the Inputs table in the app)."))
    if record.model.outputs_finite is False:
        out.append(("outputs not finite", "The first inference returned NaN or infinite values: the inputs may "
                    "not suit the model (too small an image, out-of-range ids); set their shapes with --input."))
    return out


def warnings(record: RecordData) -> list[str]:
    return [sentence for _, sentence in caveats(record)]


def notes(record: RecordData) -> list[str]:
    """What the launcher did and what the GPUs mean for start-up: facts, not doubts."""
    from .gpus.gpu_notes import gpu_notes  # kernels' table only when a record is read

    program = []
    warm = start_kind(record) == "warm"
    if record.is_program and record.finished_at is not None and IMPORT not in record.phases and not warm:
        program.append("The program never imported TensorFlow: tflaunch saw no TensorFlow phases (marks and "
                       "the time to ready still count).")
    if record.is_program and warm:
        program.append("Started warm: forked from a warm server that had imported TensorFlow and Keras before "
                       "the launch, so there is no import phase (tflaunch bench --warm).")
    program += warm_notes(record)
    if record.watching is not None:
        program.append(record.watching.words(record.time_to_ready, until_words(record.config.until)))
    if record.is_program and record.stopped_at_ready:
        unit = step_unit(record.phases) + "s"
        program.append(f"tflaunch stopped the program at its ready point ({record.config.until}) after "
                       f"{record.latency.get('n', 0)} steady {unit}, as --until asked: not a failure.")
    late = [late_events_note(record)] if record.late_count else []
    pack = [line for line in (pack_sentence(record.cache_pack), anatomy_sentence(record.cache_pack, record.anatomy))
            if line]
    return [*record.launch_notes, *pack, *program, *late, *gpu_notes(record.environment)]


# The one path a measured program runs outside the launcher's session (driver.py says why
# that matters): a fork of the warm server is in the server's session, which must outlive
# its launchers, and a session's scheduling group cannot be joined from another session.
WARM_SESSION_NOTE = ("Started warm, it ran in the warm server's session, so the kernel scheduled it in the "
                     "server's scheduling group (its autogroup), not in the launcher's as a cold start is: on a busy "
                     "machine its figures can differ from a terminal run's for that alone.")


def warm_notes(record: RecordData) -> list[str]:
    """A launch asked to start warm: why it started cold, and whether its figure includes the
    warm server's own start (its import), which a later warm launch does not pay."""
    facts = record.warm_start
    if facts is None:
        return []
    out = []
    kind = start_kind(record)
    if kind == "cold":
        why = facts.cold_because or "the warm client did not say why"
        out.append(f"Asked to start warm, started cold: {why}. Its figures are a cold start's.")
    elif kind == "warm":
        out.append(WARM_SESSION_NOTE)
    elif kind is None and record.finished_at is not None:
        out.append("Asked to start warm, but the warm client said neither that it forked the program nor why "
                   "not (it may have failed before it could): its figures may be a cold start's; see the log.")
    if facts.server_started:
        took = facts.server_import_s
        how_long = f" ({format_duration(took)})" if took is not None else ""
        out.append(f"No warm server was running for this interpreter, so this launch started one and waited for "
                   f"its import of TensorFlow{how_long}: its time to ready includes the server's own start, which a "
                   "later warm launch reuses instead of paying.")
    return out


def late_events_note(record: RecordData) -> str:
    """What was written after the probe's result, and that it was ignored."""
    n = record.late_count
    seen = ", ".join(_event_words(e) for e in record.late_events) + (", ..." if n > len(record.late_events) else "")
    return (f"The child wrote {n} event{'s' if n > 1 else ''} after the probe's result ({seen}). The result is "
            f"the probe's last word, so tflaunch ignored {'them' if n > 1 else 'it'}: the run is as the result "
            "left it. Something besides the probe writes to its output (a thread or process that a module given "
            "with --import started, a sitecustomize); find it, as it may have written before the result too.")


def _event_words(event: ev.Event) -> str:
    where = label(event.phase)
    if isinstance(event, ev.ProbeError):
        return f'an error in {where}: "{event.message[:160]}"'
    if isinstance(event, ev.PhaseStart):
        return f"a start of {where}"
    if isinstance(event, ev.PhaseEnd):
        return f"an end of {where}"
    return f"{_EVENT_NOUNS.get(type(event), 'an event')} in {where}"


_EVENT_NOUNS: dict[type, str] = {ev.Result: "a second result", ev.Hello: "a hello", ev.Mark: "a mark",
                                 ev.SettingsApplied: "settings", ev.InputsListed: "inputs", ev.Progress: "progress",
                                 ev.ImportsMeasured: "an import X-ray", ev.AnatomyMeasured: "an anatomy",
                                 ev.Saved: "a saved file"}


def inputs_line(record: RecordData) -> str:
    """The inputs as fed, NAME=shape:dtype, with "assumed" where a default was used."""
    parts = []
    for i in record.model.inputs:
        shape = "x".join(str(d) for d in i.fed_shape or []) or "scalar"
        parts.append(f"{i.name}={shape}:{i.fed_dtype or i.dtype}" + (" (assumed)" if i.assumed else ""))
    return ", ".join(parts)


def status_line(record: RecordData) -> str:
    """A few words on where the run stands, for titles and big type."""
    if record.is_program and record.status is RunStatus.OK:
        point = "exit" if record.config.until == "exit" else record.config.until.replace("_", " ")
        stopped = ", then stopped" if record.stopped_at_ready else ""
        kind = {"warm": ", warm", "cold": ", cold: warm start was not possible"}.get(start_kind(record) or "", "")
        return f"Ready in {format_duration(record.time_to_ready)} (at {point}{stopped}{kind})"
    if record.status is RunStatus.OK:
        doubts = [words for words, _ in caveats(record)]
        return f"Ready in {format_duration(record.time_to_ready)}" + (f" ({'; '.join(doubts)})" if doubts else "")
    if record.status is RunStatus.RUNNING:
        return f"Running: {label(record.current_phase or ('spawn' if record.is_program else 'steady'))}"
    where = record.failed_phase or "spawn"
    # A program may stop short after a phase had ended (in its own code between phases); a
    # model run after its last one (describing the model, or not exiting).
    ended = (phase := record.phases.get(where)) is not None and phase.state is PhaseState.DONE
    if record.status is RunStatus.CANCELLED:
        return f"Cancelled {'after' if ended else 'during'} {label(where)}"
    if record.status is RunStatus.INTERRUPTED:
        return "Interrupted: tflaunch stopped during this run"
    verb = "Timed out" if record.status is RunStatus.TIMED_OUT else "Failed"
    return f"{verb} {'after' if ended else 'in'} {label(where)}"


# Marks a launch asked to start warm gets: how it did start (session.py sets them for
# scripts; a program observed warm marks WARM_MARK itself, from the forked child).
WARM_MARK, COLD_MARK = "warm_start", "cold_start"


def start_kind(record: RecordData) -> str | None:
    """"warm", "cold" (asked warm, started cold: the log says why) or None (not asked)."""
    names = {name for name, _ in record.marks}
    return "warm" if WARM_MARK in names else "cold" if COLD_MARK in names else None


def _gpus_text(record: RecordData) -> str:
    """The GPUs TensorFlow used, as the run reported them; for a program that did not report
    them (it ended before its ready point), the GPUs NVML saw its processes hold memory on."""
    reported = record.environment.gpus
    if reported is not None:
        return ", ".join(g.model or g.name or "" for g in reported) or "no GPU"
    cards = {g.index: g.name for g in record.launch_gpus.gpus} if record.launch_gpus is not None else {}
    held = [str(cards.get(index) or f"GPU {index}") for index in sorted(record.gpu_peaks)]
    return ", ".join(held) + " (memory held, per NVML)" if held else "no GPU"


def gpu_memory_line(record: RecordData) -> str | None:
    """Each GPU's peak held by the process tree, with TensorFlow's allocator peak beside it:
    "GPU 0: 3.00 GiB (TensorFlow allocator peak 2.50 GiB)"; None without GPU figures."""
    used, allocator = record.gpu_peaks, record.allocator_peaks
    parts = []
    for gpu in sorted(set(used) | set(allocator)):
        text = f"GPU {gpu}: {format_bytes(used[gpu])}" if gpu in used else f"GPU {gpu}: not sampled"
        if gpu in allocator:
            text += f" (TensorFlow allocator peak {format_bytes(allocator[gpu])})"
        parts.append(text)
    return "; ".join(parts) or None


def environment_line(record: RecordData) -> str:
    """TensorFlow, Python, CPU, GPUs and driver in one line; what is unknown is left out."""
    env = record.environment
    if not env:
        return "not reported (the run ended before the probe described it)"
    gpus = _gpus_text(record)
    parts = [f"{name} {version}" for name, version in (("TensorFlow", env.tensorflow), ("Keras", env.keras),
                                                        ("Python", env.python)) if version]
    if env.cpu:
        parts.append(f"{env.cpu} ({env.cores} cores)" if env.cores else env.cpu)
    parts.append(gpus)
    if env.driver:
        parts.append(f"driver {env.driver}")
    return ", ".join(parts)


def headline(record: RecordData) -> str:
    """One line a user can act on: how the run ended and, if it failed, why."""
    if record.failure is not None and record.status in (RunStatus.FAILED, RunStatus.TIMED_OUT):
        return f"{status_line(record)}: {record.failure.message}"
    return status_line(record)
