"""The run history's rows read back: every column of every row checked (stored_values.py)
before it becomes a summary or a record (storable.py makes values storable on the way in).

A file can hold what tflaunch never wrote (another program, a bad disk, an old bug), and
one such row must not hide the others: it is listed as damaged, with the column and the
value that could not be read. A few columns only add detail to a run (its marks, a phase's
parts, the import X-ray, GPU samples); a damaged one of those loses that detail, not the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..phases import NAME
from ..run import read_as
from ..run.anatomy import Anatomy, checked_anatomy
from ..run.environment_facts import EnvironmentFacts
from ..run.events import checked_imports
from ..run.gpus.launch_gpus import LaunchGpus
from ..run.import_facts import ImportFacts
from ..run.model_facts import ModelFacts
from ..run.pack_facts import PackFacts
from ..run.read_back import ReadBack
from ..run.record import Failure, PhaseRecord, PhaseState, RunRecord, RunStatus
from ..run.run_kind import PLAIN, RunKind, stored_kind
from ..run.storage.eviction import INSTALLATION, MODEL, Level, PageCacheReport
from ..run.trial_node import TrialNode
from ..run.warm.warm_facts import WarmStart
from ..run.watch_cost import WatchCost
from ..run.words import COLD_MARK, WARM_MARK
from ..settings.config import LaunchConfig
from .storable import INT64, gpu_figure, storable_real
from .stored_values import (
    MOST_LISTED,
    TOO_LARGE,
    DamagedRowError,
    checked_bytes,
    checked_choice,
    checked_int,
    checked_offset,
    checked_phase_name,
    checked_seconds,
    checked_text,
    checked_time,
    described,
    parsed_json,
    shown,
    stored_config,
    stored_trial,
)

DAMAGED = "damaged"  # the status a summary shows for a row that cannot be read


def _capped(column: str) -> str:
    return (f"CASE WHEN length(CAST({column} AS BLOB)) > {MOST_LISTED} "
            f"THEN '{TOO_LARGE}' || length(CAST({column} AS BLOB)) ELSE {column} END")


ANATOMY_SIGN = "(an anatomy run)"  # a part of ANATOMY_NOTE, as the launch's JSON holds it


# The columns a summary is read from, in summary_from_row's order. How a launch asked to
# start warm did start is one of its marks (words.start_kind): found by SQLite in the marks'
# text, not by parsing a program's thousand marks for every row listed.
# The rest of its kind (run_kind.py) likewise: a profiled run by its anatomy or its launch
# note, a warm launch that started the server by that fact in its launch, a cluster trial by
# the node in its trial.
SUMMARY_COLUMNS = (f"id, launched_at, {_capped('source')}, {_capped('model')}, {_capped('status')}, "
                   f"{_capped('failed_phase')}, time_to_ready, peak_rss, {_capped('config')},"
                   f" {_capped('model_info')}, finished_at, command IS NOT NULL,"
                   f" CASE WHEN instr(marks, '[\"{WARM_MARK}\",') THEN 'warm'"
                   f" WHEN instr(marks, '[\"{COLD_MARK}\",') THEN 'cold' END,"
                   f" anatomy NOT IN ('', '{{}}') OR instr(launch, '{ANATOMY_SIGN}') > 0,"
                   " instr(launch, '\"server_import_s\"') > 0, trial IS NOT NULL AND instr(trial, '\"node\"') > 0")


@dataclass(frozen=True)
class RunSummary:
    """One row of the history list, without samples."""

    id: int
    launched_at: float  # 0.0 for a damaged row whose own time cannot be read
    source: str
    model: str
    status: str  # a RunStatus value, or DAMAGED
    failed_phase: str | None
    time_to_ready: float | None
    peak_rss: int | None
    settings_summary: str
    assumed_inputs: bool = False  # a default filled an input shape: the figures are tflaunch's guess
    damage: str = ""  # why a damaged row cannot be read: the column and its value
    outputs_not_finite: bool = False  # ready, but the first inference gave NaN or Inf
    start: str | None = None  # "warm" or "cold" for a launch asked to start warm (words.start_kind)
    kind: RunKind = PLAIN  # how it was measured besides its settings (run_kind.py)


# -- a summary ----------------------------------------------------------------------------------
def _marks_of_model(model: ModelFacts) -> tuple[bool, str, bool]:
    """(assumed_inputs, damage, outputs_not_finite) of a stored run's model facts."""
    return any(i.assumed for i in model.inputs), "", model.outputs_finite is False


def summary_from_row(row: Sequence[Any]) -> RunSummary:
    """A row of SUMMARY_COLUMNS as a summary; a damaged one when any of them is not what
    tflaunch writes."""
    (run_id, launched_at, source, model, status, failed_phase, ready, peak, config, model_info, finished_at, script,
     start, anatomy, server_started, on_a_node) = row
    try:
        launched = checked_time(launched_at, "launched_at", optional=False)
        assert launched is not None  # not optional
        return RunSummary(
            run_id, launched, checked_text(source, "source"), checked_text(model, "model"),
            checked_choice(status, "status", (s.value for s in RunStatus)),
            None if failed_phase is None else checked_phase_name(failed_phase, "failed_phase"),
            _ready_or_exit(checked_seconds(ready, "time_to_ready"), bool(script), status, launched, finished_at),
            checked_bytes(peak, "peak_rss"), stored_config(config).summary(),
            *_marks_of_model(described(ModelFacts, model_info, "model_info")), start=start,
            kind=stored_kind(source, bool(anatomy), start, bool(server_started), bool(on_a_node)))
    except DamagedRowError as exc:
        try:
            launched = checked_time(launched_at, "launched_at") or 0.0
        except DamagedRowError:
            launched = 0.0
        return RunSummary(run_id, launched, _listable(source), _listable(model), DAMAGED, None, None, None, "",
                          damage=str(exc))


def _listable(value: Any) -> str:
    """A damaged row's source or model as the list shows it: "?" for what is not text."""
    return value if isinstance(value, str) and not value.startswith(TOO_LARGE) else "?"


def _ready_or_exit(ready: float | None, old_script: bool, status: Any, launched: float,
                   finished_at: Any) -> float | None:
    """The time to ready; for a finished run of the old `script` subject (no ready point was
    stored), its exit, which is a program's ready point when it runs to its exit."""
    if ready is not None or not old_script or status != RunStatus.OK.value:
        return ready
    return _ran(launched, finished_at)


def _ran(launched: float, finished_at: Any) -> float | None:
    """How long a run ran; None while it runs, or when its end cannot be read (which loses
    that figure, not the run: load() says what is wrong with it)."""
    try:
        finished = checked_time(finished_at, "finished_at")
    except DamagedRowError:
        return None
    return None if finished is None else max(finished - launched, 0.0)


# -- a whole record --------------------------------------------------------------------------------
# A run's phases as History.load selects them, in this order.
PHASE_COLUMNS = "name, state, started, duration, rss, peak_rss, latency, parts, seq, extra"


def _failure(text: Any) -> Failure | None:
    if not text:
        return None
    data = parsed_json(text, "failure")
    return Failure(checked_text(data.get("kind"), "failure kind"), checked_text(data.get("message"), "failure message"),
                   checked_text(data.get("detail", ""), "failure detail"))


def _latency(text: Any, name: str) -> dict[str, float]:
    latency: dict[str, float] = parsed_json(text, name)
    for key, value in latency.items():
        if key == "n":
            checked_int(value, f"{name} n", 0)
        else:
            checked_seconds(value, f"{name} {key}")  # None: a figure the child sent out of range
    return latency


def _parts(text: Any) -> dict[str, float]:
    """A phase's parts (seconds by name); a damaged value loses the parts, not the run."""
    try:
        parts = parsed_json(text, "parts")
    except DamagedRowError:
        return {}
    return {str(k): float(v) for k, v in parts.items()
            if storable_real(v) is not None and v >= 0}


def _extra(text: Any) -> dict[str, Any]:
    """A phase's further figures (a retrace count); a damaged value loses them, not the run."""
    try:
        extra = parsed_json(text, "extra")
    except DamagedRowError:
        return {}
    limits = {"count": 1 << 31, "read_bytes": INT64[1], "rchar": INT64[1]}
    return {key: extra[key] for key, high in limits.items()
            if isinstance(extra.get(key), int) and not isinstance(extra[key], bool) and 0 <= extra[key] < high}


def _launch(text: Any) -> tuple[PageCacheReport | None, list[str], WarmStart | None]:
    """What the launcher did first (page cache report, notes, a warm start's facts); a damaged
    one loses them, not the run."""
    try:
        launch = parsed_json(text or "{}", "launch")
    except DamagedRowError:
        return None, [], None
    notes = launch.get("notes")
    return (_page_cache(launch.get("page_cache")),
            [n[:2000] for n in notes[:50] if isinstance(n, str)] if isinstance(notes, list) else [],
            _warm_start(launch.get("warm_start")))


def _launch_gpus(nvml: Mapping[str, Any] | None) -> LaunchGpus | None:
    """NVML at launch, as the record copied it into its environment (checked there as a mapping)."""
    return LaunchGpus(nvml) if nvml else None


def _cache_pack(text: Any) -> PackFacts | None:
    """A run's cache pack facts (pack_facts.py), each read leniently there; a damaged launch
    column, or facts without their pack's folder, lose them, not the run."""
    try:
        pack = parsed_json(text or "{}", "launch").get("cache_pack")
    except DamagedRowError:
        return None
    return PackFacts(pack) if isinstance(pack, dict) and isinstance(pack.get("folder"), str) else None


def _watching(text: Any) -> WatchCost | None:
    """What watching cost a program (watch_cost.py), read leniently: a damaged launch column
    loses it, not the run."""
    try:
        return WatchCost.of(parsed_json(text or "{}", "launch").get("watching"))
    except DamagedRowError:
        return None


def _page_cache(data: Any) -> PageCacheReport | None:
    """A cold start's stored eviction report, each figure checked (a junk one is 0 or None); one
    without its setting's name is lost, not the run."""
    if not isinstance(data, dict) or not isinstance(data.get("state"), str):
        return None

    def count(value: Any) -> int | None:
        return read_as.count(value, below=INT64[1])

    def texts(value: Any) -> list[str]:
        return list(read_as.texts(value))

    levels = [Level(name, files=count(level.get("files")) or 0, size=count(level.get("bytes")) or 0,
                    before=count(level.get("resident_before")) or 0, after=count(level.get("resident_after")) or 0,
                    vanished=count(level.get("vanished")) or 0, unreadable=texts(level.get("unreadable")))
              for name in (MODEL, INSTALLATION) if isinstance(level := data.get(name.lower()), dict)]
    return PageCacheReport(data["state"], levels, notes=texts(data.get("notes")),
                           preloaded=count(data.get("preloaded")),
                           preload_seconds=read_as.seconds(data.get("preload_seconds")))


def _warm_start(data: Any) -> WarmStart | None:
    """A warm start's stored facts, each checked (words.warm_notes reads them)."""
    if not isinstance(data, dict) or data.get("asked") is not True:
        return None
    cold_because = data["cold_because"][:2000] if isinstance(data.get("cold_because"), str) else None
    return WarmStart(cold_because, server_started="server_import_s" in data,
                     server_import_s=read_as.seconds(data.get("server_import_s")))


def _imports(text: Any) -> ImportFacts | None:
    """A run's import X-ray, checked as the probe's event is; a damaged one loses the
    X-ray, not the run."""
    try:
        return checked_imports(parsed_json(text, "imports")) if text and text != "{}" else None
    except (DamagedRowError, ValueError, ArithmeticError):
        return None


def _anatomy(text: Any) -> Anatomy | None:
    """A run's anatomy, checked as the child's event is; a damaged one loses the anatomy, not the run."""
    try:
        return checked_anatomy(parsed_json(text, "anatomy")) if text and text != "{}" else None
    except (DamagedRowError, ValueError, ArithmeticError):
        return None


def _stored_marks(text: Any) -> list[tuple[str, float]]:
    """A program's marks, (name, s since launch); damaged entries are skipped, not the run."""
    if not text:
        return []
    try:
        raw = parsed_json(text, "marks", list)
    except DamagedRowError:
        return []
    return [(item[0], float(item[1])) for item in raw[:1000]
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and NAME.match(item[0])
            and storable_real(item[1]) is not None and item[1] >= 0]


def _command(text: Any) -> list[str] | None:
    if text is None:
        return None
    command: list[str] = parsed_json(text, "command", list)
    if not all(isinstance(part, str) for part in command):
        raise DamagedRowError("command holds something other than text")
    if not command:
        raise DamagedRowError("command is [], not a command line")
    return command


def _flag(value: Any, name: str) -> bool:
    if value not in (0, 1) or isinstance(value, float):
        raise DamagedRowError(f"{name} is {shown(value)}, not 0 or 1")
    return bool(value)


def _phase(row: Sequence[Any]) -> PhaseRecord:
    name, state, started, duration, rss, peak, latency, parts, seq, extra = row
    name = checked_phase_name(name, "phase")
    checked_int(seq, f"phase {name} seq", 0)
    return PhaseRecord(
        name, PhaseState(checked_choice(state, f"phase {name} state", (s.value for s in PhaseState))),
        checked_time(started, f"phase {name} start"), checked_seconds(duration, f"phase {name} duration"),
        checked_bytes(rss, f"phase {name} rss"), checked_bytes(peak, f"phase {name} peak_rss"),
        _latency(latency, f"phase {name} latency"), parts=_parts(parts), count=(figures := _extra(extra)).get("count"),
        read_bytes=figures.get("read_bytes"), rchar=figures.get("rchar"))


def _as_program(config: LaunchConfig, command: list[str] | None) -> LaunchConfig:
    """A run of the old `script` subject (a user's command launched with the settings, one
    span; the app's Launch script until the one engine) reads as what it was: a program
    run to its exit."""
    if command is None or config.is_program:
        return config
    return config.replace(program=tuple(command), until="exit")


def record_from_rows(data: dict[str, Any], phases: Iterable[Sequence[Any]],
                     samples: Iterable[Sequence[Any]]) -> RunRecord:
    """A stored run (its runs row by column name, its phases in PHASE_COLUMNS and its
    samples) as a record; DamagedRowError naming the first column that cannot be read."""
    launched_at = checked_time(data["launched_at"], "launched_at", optional=False)
    assert launched_at is not None  # not optional
    source = checked_text(data["source"], "source")
    checked_text(data["model"], "model")
    checked_bytes(data["peak_rss"], "peak_rss")
    checked_int(data["writer_pid"], "writer_pid"), checked_time(data["writer_started"], "writer_started")
    checked_int(data["sweep_id"], "sweep_id")
    trial = stored_trial(data["trial"]) if data["trial"] is not None else None
    record = RunRecord(_as_program(stored_config(data["config"]), _command(data["command"])), launched_at=launched_at)
    record.source = source
    if trial is not None and trial.on_a_node:  # a cluster trial
        record.node = TrialNode(trial.node_type, trial.host)
    record.status = RunStatus(checked_choice(data["status"], "status", (s.value for s in RunStatus)))
    record.finished_at = checked_time(data["finished_at"], "finished_at")
    failed = data["failed_phase"]
    record.failed_phase = None if failed is None else checked_phase_name(failed, "failed_phase")
    record.marks = _stored_marks(data["marks"])
    record.stopped_at_ready = _flag(data["stopped_at_ready"], "stopped_at_ready")
    record.settings = described(ReadBack, data["settings"], "settings")
    record.environment = described(EnvironmentFacts, data["environment"], "environment")
    record.launch_gpus = _launch_gpus(record.environment.nvml)
    record.model = described(ModelFacts, data["model_info"], "model_info")
    record.imports = _imports(data["imports"])
    record.anatomy = _anatomy(data.get("anatomy"))
    record.page_cache, record.launch_notes, record.warm_start = _launch(data.get("launch"))
    record.cache_pack = _cache_pack(data.get("launch"))
    record.watching = _watching(data.get("launch"))
    ready = _ready_or_exit(checked_seconds(data["time_to_ready"], "time_to_ready"), data["command"] is not None,
                           record.status.value, launched_at, data["finished_at"])
    if ready is not None:
        record.ready_at = launched_at + ready
    record.failure = _failure(data["failure"])
    record.exit_code, record.exit_signal = checked_int(data["exit_code"], "exit_code"), checked_int(data["exit_signal"],
                                                                                        "exit_signal")
    for line in checked_text(data["stderr_tail"], "stderr_tail").splitlines():
        record.add_stderr(line)  # capped as a live run's: a row from an older version may be huge
    record.phases = {}  # the phases the run reported, in their stored order
    for row in phases:
        phase = _phase(row)
        # Histories written before a model's phases were kept as reached hold the probe's
        # seven from the start: one never reached ("waiting") is none the run has.
        if phase.state is not PhaseState.WAITING:
            record.phases[phase.name] = phase
    record.samples = [(checked_offset(t, "sample time"), checked_int(rss, "sample rss", 0, optional=False) or 0)
                      for t, rss in samples]
    return record


def gpu_samples_from_rows(rows: Iterable[Sequence[Any]]) -> list[tuple[float, dict[int, int]]]:
    """Stored (t, gpu, bytes) rows, ordered by t, as a record's GPU samples; a damaged row
    (a time that is no finite number, a GPU or a size no card has) is skipped: it loses one
    point of a curve, not the run."""
    samples: list[tuple[float, dict[int, int]]] = []
    for t, gpu, size in rows:
        at = storable_real(t)
        if at is None or not gpu_figure(gpu, size):
            continue
        if samples and samples[-1][0] == at:
            samples[-1][1][gpu] = size
        else:
            samples.append((at, {gpu: size}))
    return samples
