"""A TF Serving warm-up file written or checked by the probe, in a child of the chosen
interpreter with the run's whole environment (the probe's serving warm-up mode).

The child answers with one `serving_warmup` line, which belongs to this mode rather than to
a run's protocol (as the known-XLA-flags answer does); it is checked here, where it enters,
like every event: a child cannot make this module raise anything but WarmupError.
"""

from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass
from typing import Any

from ..probe.warmup_file import MAX_RECORDS
from ..settings.child import PROBE_MAIN, probe_config
from ..settings.config import LaunchConfig
from .environment import launch_environment
from .events import EventParser, ProbeError

STATUSES = ("ok", "failed", "skipped")
MAX_TEXT = 4096


class WarmupError(Exception):
    """The file could not be written or checked; `kind` as in a failure's JSON."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


@dataclass(frozen=True)
class RecordOutcome:
    record: int
    signature: str | None
    status: str  # one of STATUSES
    seconds: float | None  # the replayed call, when it ran
    reason: str


@dataclass(frozen=True)
class WarmupReport:
    action: str  # write or check
    path: str
    records: int
    outcomes: tuple[RecordOutcome, ...]
    damage: str | None  # why reading stopped before the file's end
    replay_s: float
    fresh: bool  # replayed on a freshly loaded model, as TF Serving does at load
    written: bool = False
    serving_name: str = ""
    signature: str = ""
    inputs: tuple[str, ...] = ()  # as fed, e.g. "x=1x4:float32 (assumed)"

    @property
    def failed(self) -> list[RecordOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    @property
    def ok(self) -> bool:
        return not self.failed and self.damage is None and self.records > 0

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "path": self.path, "records": self.records, "ok": self.ok,
                "written": self.written, "damage": self.damage, "replay_s": self.replay_s, "fresh": self.fresh,
                "serving_name": self.serving_name, "signature": self.signature, "inputs": list(self.inputs),
                "outcomes": [vars(o) for o in self.outcomes]}


def warmup_command(config: LaunchConfig, action: str, options: dict[str, Any]) -> list[str]:
    cfg = {**probe_config(config), "serving_warmup": options}
    return [config.python, str(PROBE_MAIN), "--serving-warmup", action, json.dumps(cfg)]


def run_warmup(config: LaunchConfig, action: str, options: dict[str, Any]) -> WarmupReport:
    """Write (action write) or replay (check) the model's warm-up file in a child."""
    try:
        done = subprocess.run(warmup_command(config, action, options), capture_output=True,
                              stdin=subprocess.DEVNULL, env=launch_environment(config), timeout=config.timeout)
    except OSError as exc:
        raise WarmupError("launch_failed", f"Could not start {config.python}: {exc.strerror or exc}. Check "
                                           "--python.") from None
    except subprocess.TimeoutExpired:
        raise WarmupError("timeout", f"The warm-up file's child took longer than {config.timeout:.0f} s; give "
                                     "more with --timeout SECONDS.") from None
    parser = EventParser()
    for line in done.stdout.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("event") == "serving_warmup":
            return parse_report(obj)
        event = parser.parse(line)
        if isinstance(event, ProbeError):
            raise WarmupError(event.kind, event.message)
    tail = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
    raise WarmupError("probe_failed", f"The probe ended (exit code {done.returncode}) without a word about the "
                                      f"warm-up file: {tail[:MAX_TEXT]}")


def _text(obj: dict[str, Any], key: str, default: str = "") -> str:
    value = obj.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ValueError(key)
    return value[:MAX_TEXT]


def _count(obj: dict[str, Any], key: str, high: int) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise ValueError(key)
    return value


def _seconds(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value < 1e6:
        raise ValueError(key)
    return float(value)


def _outcome(raw: Any) -> RecordOutcome:
    if not isinstance(raw, dict) or raw.get("status") not in STATUSES:
        raise ValueError("outcomes")
    return RecordOutcome(_count(raw, "record", MAX_RECORDS + 1), _text(raw, "signature") or None, raw["status"],
                         _seconds(raw, "seconds"), _text(raw, "reason"))


def parse_report(obj: dict[str, Any]) -> WarmupReport:
    """The child's answer, checked; WarmupError when it is malformed."""
    try:
        outcomes = obj.get("outcomes")
        inputs = obj.get("inputs") or []
        if not isinstance(outcomes, list) or len(outcomes) > MAX_RECORDS + 1 or not isinstance(inputs, list):
            raise ValueError("outcomes")
        damage = _text(obj, "damage") or None
        return WarmupReport(
            action=_text(obj, "action"), path=_text(obj, "path"), records=_count(obj, "records", MAX_RECORDS + 1),
            outcomes=tuple(_outcome(o) for o in outcomes), damage=damage, replay_s=_seconds(obj, "replay_s") or 0.0,
            fresh=bool(obj.get("fresh")), written=bool(obj.get("written")), serving_name=_text(obj, "serving_name"),
            signature=_text(obj, "signature"),
            inputs=tuple(_text(i, "text") for i in inputs[:1024] if isinstance(i, dict)))
    except ValueError as exc:
        raise WarmupError("malformed_answer", f"The probe's answer about the warm-up file is malformed ({exc}); "
                                              "the probe of this interpreter may be another tflaunch's.") from None
