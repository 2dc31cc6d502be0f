"""What the probe's serving warm-up mode answers: the report of a TF Serving warm-up file
written or checked, as one `serving_warmup` event (events.py builds it from this module's
check, so a child's answer is checked where it enters, like every event).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..probe.serving.warmup_file import MAX_RECORDS

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
