"""The settings as command-line arguments: flags and help from the one settings table."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..probe.input_shapes import InputSpecError, spec_text
from ..probe.input_shapes import parse as parse_input
from ..run.events import PROTOCOL_VERSION
from ..settings.config import DEFAULT_TIMEOUT_S, LaunchConfig
from ..settings.vocabulary import BY_NAME, parse_tristate


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _env_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not {text!r}")
    return name, value


def _gpu_list(text: str) -> tuple[int, ...]:
    if text.strip().lower() == "none":
        return ()
    try:
        return tuple(int(i) for i in text.split(",") if i.strip() != "")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GPU indices like 0,1 (or none), not {text!r}") from None


def _input_spec(text: str) -> tuple[str, str]:
    try:
        name, dims, dtype = parse_input(text)
    except InputSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name, spec_text(dims, dtype)


def _tristate(text: str) -> bool | None:
    try:
        return parse_tristate(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected default, on or off, not {text!r}") from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, not {text}")
    return value


class _XlaSplit(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        parser.error("--xla is two settings now: --xla-auto (XLA auto-clustering, applied to any program "
                     "through TF_XLA_FLAGS) or --jit-compile (tflaunch compiles the model with XLA; "
                     "measurement only).")


def add_config_arguments(parser: argparse.ArgumentParser, *, model_required: bool) -> None:
    def help_of(name: str) -> str:
        return BY_NAME[name].help.replace("%", "%%")

    parser.add_argument("--model", required=model_required, default=None, help=help_of("model"))
    parser.add_argument("--python", default=sys.executable, help=help_of("python") + " Default: this one.")
    parser.add_argument("--intra", type=int, default=0, help=help_of("intra"))
    parser.add_argument("--inter", type=int, default=0, help=help_of("inter"))
    parser.add_argument("--xla-auto", action="store_true", help=help_of("xla_auto"))
    parser.add_argument("--jit-compile", action="store_true", help=help_of("jit_compile"))
    parser.add_argument("--xla", nargs=0, action=_XlaSplit, help=argparse.SUPPRESS)
    parser.add_argument("--onednn", type=_tristate, default=None, metavar="default|on|off", help=help_of("onednn"))
    parser.add_argument("--no-onednn", dest="onednn", action="store_const", const=False,
                        help="the same as --onednn off")
    parser.add_argument("--log-level", type=int, choices=range(4), help=help_of("log_level"))
    parser.add_argument("--gpus", type=_gpu_list, help=help_of("visible_gpus") + " E.g. 0,1 or none.")
    parser.add_argument("--memory-growth", action="store_true", help=help_of("memory_growth"))
    parser.add_argument("--memory-limit", type=int, metavar="MIB", help=help_of("memory_limit_mb"))
    parser.add_argument("--env", type=_env_pair, action="append", default=[], metavar="NAME=VALUE",
                        help=help_of("extra_env") + " Repeatable.")
    parser.add_argument("--batch", type=positive_int, default=1, help=help_of("batch"))
    parser.add_argument("--input", dest="inputs", type=_input_spec, action="append", default=[],
                        metavar="NAME=D1xD2[:DTYPE]", help=help_of("inputs") + " Repeatable.")
    parser.add_argument("--signature", default="", metavar="NAME", help=help_of("signature"))
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE_OR_FILE",
                        help=help_of("imports") + " Repeatable.")
    parser.add_argument("--unsafe-deserialization", action="store_true", help=help_of("unsafe_deserialization"))
    parser.add_argument("--steady", type=int, default=20, help=help_of("steady"))
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=help_of("timeout") + f" Default {DEFAULT_TIMEOUT_S:.0f}.")


def config_from_args(args: argparse.Namespace) -> LaunchConfig:
    return LaunchConfig(
        model=args.model or LaunchConfig.model, python=args.python, intra=args.intra, inter=args.inter,
        xla_auto=args.xla_auto, jit_compile=args.jit_compile, onednn=args.onednn, log_level=args.log_level,
        visible_gpus=args.gpus, memory_growth=args.memory_growth, memory_limit_mb=args.memory_limit,
        extra_env=dict(args.env), batch=args.batch, inputs=dict(args.inputs), signature=args.signature,
        imports=tuple(args.imports), unsafe_deserialization=args.unsafe_deserialization, steady=args.steady,
        timeout=args.timeout,
    )


def failure_json(kind: str, message: str, field: str | None = None) -> dict[str, Any]:
    """What --json prints when nothing ran: the same status, kind and message a run has."""
    return {"protocol": PROTOCOL_VERSION, "status": "failed", "runs": [],
            "failure": {"kind": kind, "message": message, **({"field": field} if field else {})},
            "summary": {"ok": 0, "runs": 0, "phases": None, "time_to_ready": None}}


def print_problems(problems: list[Any]) -> None:
    for p in problems:
        print(f"tflaunch: {p.field}: {p.message}", file=sys.stderr)
