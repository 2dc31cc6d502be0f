"""One stored value checked as it is read back: a column of a history row, or a value in
one of its JSON columns, as tflaunch could have written it (storable.py makes values
storable on the way in). DamagedRowError names the column and the value otherwise.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ..phases import NAME
from ..run.protocol import EPOCH_RANGE
from ..run.trial_info import TrialInfo
from ..settings.config import LaunchConfig
from ..settings.vocabulary import LOG_LEVELS
from .storable import INT64, storable_real

# A duration or a memory figure need only be a finite number from 0 (a whole one for bytes):
# one beyond any measurement, stored by a version that did not check what children sent,
# is still a run to show, its figure as "invalid" (units.py).
# A listing reads every row: a value larger than any run writes (a crafted row of 200 MB)
# reaches Python as a short marker with its size instead (SQLite measures it), and the row is
# damaged with that reason; the run itself is still read whole by load().
MOST_LISTED = 1 << 20
TOO_LARGE = "\x01too large: "  # no value tflaunch writes starts with \x01


D = TypeVar("D")


class DamagedRowError(ValueError):
    """A stored value tflaunch could not have written; the message names the column and the value."""


def shown(value: Any, limit: int = 40) -> str:
    """A stored value in a message: its repr, cut short (a column can hold megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


# -- one value each ----------------------------------------------------------------------------
def checked_real(value: Any, name: str, low: float, high: float, expected: str, optional: bool = True) -> float | None:
    if value is None and optional:
        return None
    number = storable_real(value)
    if number is None or not low <= number <= high:
        raise DamagedRowError(f"{name} is {shown(value)}, not {expected}")
    return number


def checked_time(value: Any, name: str, optional: bool = True) -> float | None:
    """A wall-clock time: what the probe's protocol accepts (a date every table can print)."""
    return checked_real(value, name, *EPOCH_RANGE, "a time from 1970 to 2286", optional)


def checked_seconds(value: Any, name: str) -> float | None:
    return checked_real(value, name, 0.0, math.inf, "a number of seconds from 0")


def checked_offset(value: Any, name: str) -> float:
    """Seconds from launch: a sample's time (a clock set back can make it negative)."""
    number = checked_real(value, name, -math.inf, math.inf, "a number of seconds from launch", optional=False)
    assert number is not None  # not optional
    return number


def checked_int(value: Any, name: str, low: int = INT64[0], high: int = INT64[1], optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        bounds = "" if (low, high) == INT64 else f" from {low} to {high}"
        raise DamagedRowError(f"{name} is {shown(value)}, not a whole number{bounds}")
    return value


def checked_bytes(value: Any, name: str) -> int | None:
    return checked_int(value, name, 0)


def checked_text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise DamagedRowError(f"{name} is {shown(value)}, not text")
    _not_too_large(value, name)
    return value


def _not_too_large(value: Any, name: str) -> None:
    if isinstance(value, str) and value.startswith(TOO_LARGE):
        raise DamagedRowError(f"{name} is {value[len(TOO_LARGE):]} bytes, more than tflaunch lists "
                              f"({MOST_LISTED}); no run writes that much")


def checked_choice(value: Any, name: str, allowed: Iterable[str]) -> str:
    if value not in tuple(allowed):
        raise DamagedRowError(f"{name} is {shown(value)}, which tflaunch does not know")
    return str(value)


def checked_phase_name(value: Any, name: str) -> str:
    """A stored phase name: any well-formed one (the vocabulary is open); not one is damage."""
    if not isinstance(value, str) or not NAME.match(value):
        raise DamagedRowError(f"{name} is {shown(value)}, not a phase name")
    return value


# -- JSON columns --------------------------------------------------------------------------------
def _refuse_constant(name: str) -> Any:
    def refuse(constant: str) -> Any:
        raise DamagedRowError(f"{name} holds {constant}")
    return refuse


def _finite_float(name: str) -> Any:
    def parse(text: str) -> float:
        number = float(text)
        if not math.isfinite(number):  # 1e400
            raise DamagedRowError(f"{name} holds {text}")
        return number
    return parse


def _int64(name: str) -> Any:
    """JSON integers as tflaunch writes them: none beyond 64 bits (nor a float's range)."""
    def parse(text: str) -> int:
        number = int(text)
        if not INT64[0] <= number <= INT64[1]:
            raise DamagedRowError(f"{name} holds {shown(number)}, a whole number beyond 64 bits")
        return number
    return parse


def parsed_json(text: Any, name: str, kind: type = dict) -> Any:
    """A stored JSON value of the given kind, with no NaN, Infinity or giant integer in it."""
    if text is None or text == "":
        return kind()
    if not isinstance(text, (str, bytes)):
        raise DamagedRowError(f"{name} is {shown(text)}, not JSON")
    _not_too_large(text, name)
    try:
        value = json.loads(text, parse_constant=_refuse_constant(name), parse_float=_finite_float(name),
                           parse_int=_int64(name))
    except DamagedRowError:
        raise
    except (ValueError, RecursionError) as exc:
        raise DamagedRowError(f"{name} is not valid JSON ({exc})") from None
    if not isinstance(value, kind):
        raise DamagedRowError(f"{name} is {type(value).__name__}, not {kind.__name__}")
    return value


def described(facts: Callable[[dict[str, Any]], D], text: Any, name: str) -> D:
    """A stored description (model_info, environment) as its typed facts: a figure of the
    wrong type is no figure there (None), as in a child's event, so it costs the run nothing;
    only what is not a JSON object at all damages the row."""
    return facts(parsed_json(text, name))


_BOOLS = ("xla_auto", "jit_compile", "memory_growth", "unsafe_deserialization")
# Wide bounds: what no run could have had, not what the launch check allows today (a limit
# it tightens must not turn older runs into damaged ones).
_COUNTS = {"intra": (0, 1 << 31), "inter": (0, 1 << 31), "batch": (0, 1 << 40), "steady": (0, 1 << 40)}


def stored_config(text: Any) -> LaunchConfig:
    """The LaunchConfig of a row, every field of the type a run could have had."""
    data = parsed_json(text, "config")
    try:
        config = LaunchConfig.from_dict(data)
    except (TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        raise DamagedRowError(f"config cannot be read ({exc})") from None
    for name in ("model", "python", "signature"):
        checked_text(getattr(config, name), f"config {name}")
    for name in _BOOLS:
        if not isinstance(getattr(config, name), bool):
            raise DamagedRowError(f"config {name} is {shown(getattr(config, name))}, not on or off")
    for name, (low, high) in _COUNTS.items():
        checked_int(getattr(config, name), f"config {name}", low, high)
    if config.onednn is not None and not isinstance(config.onednn, bool):
        raise DamagedRowError(f"config onednn is {shown(config.onednn)}, not on or off")
    if config.log_level is not None and (not isinstance(config.log_level, int) or isinstance(config.log_level, bool)
                                         or config.log_level not in LOG_LEVELS):
        raise DamagedRowError(f"config log_level is {shown(config.log_level)}")
    for gpu in config.visible_gpus or ():
        checked_int(gpu, "config visible_gpus", 0, 1 << 16)
    checked_int(config.memory_limit_mb, "config memory_limit_mb", 0, 1 << 40)
    timeout = checked_real(config.timeout, "config timeout", 0.0, math.inf, "a positive number of seconds",
                           optional=False)
    if not timeout:
        raise DamagedRowError(f"config timeout is {shown(config.timeout)}, not a positive number of seconds")
    return config


def checked_node(node: Any) -> dict[str, Any]:
    """The facts of the node a cluster trial ran on (cluster/node.py): texts, None, lists of texts."""
    if not isinstance(node, dict) or not all(isinstance(v, (str, type(None))) or (
            isinstance(v, list) and all(isinstance(m, str) for m in v)) for v in node.values()):
        raise DamagedRowError(f"trial node is {shown(node)}, not the facts of a node")
    return node


def stored_trial(text: Any) -> TrialInfo:
    """Which trial of a sweep a run was: candidate, warmup, number, instance; a cluster
    trial's index, node type and node too."""
    trial: dict[str, Any] = parsed_json(text, "trial")
    candidate = checked_text(trial.get("candidate"), "trial candidate")
    warmup = trial.get("warmup")
    if not isinstance(warmup, bool):
        raise DamagedRowError(f"trial warmup is {shown(warmup)}, not true or false")
    number = checked_int(trial.get("number"), "trial number", 0, optional=False)
    instance = checked_int(trial.get("instance", 0), "trial instance", 0)
    assert number is not None  # not optional
    if "node" not in trial:
        return TrialInfo(candidate, warmup, number, instance or 0)
    # A cluster trial: the node it ran on, as its result file said.
    return TrialInfo(candidate, warmup, number, instance or 0,
                     checked_int(trial.get("index"), "trial index", 0, optional=False),
                     checked_text(trial.get("node_type"), "trial node type"), checked_node(trial["node"]))
