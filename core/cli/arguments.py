"""The settings as command-line arguments: flags and help from the one settings table."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..paths import profiles_dir
from ..phases import normal_until
from ..probe.input_shapes import InputSpecError, spec_text
from ..probe.input_shapes import parse as parse_input
from ..run.events import PROTOCOL_VERSION
from ..settings.config import DEFAULT_TIMEOUT_S, LaunchConfig, valid_until
from ..settings.vocabulary import (
    ALLOCATORS,
    BY_NAME,
    CACHE_STATES,
    CALLS,
    GRAPPLER,
    MODULE_LOADING,
    PAGE_CACHE_STATES,
    parse_tristate,
)
from ..store.profiles import ProfileError, ProfileStore, UntrustedProfileError


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


def _word(choices: dict[str, str]) -> Any:
    """A word setting as typed; `default` leaves it to the environment (None)."""
    def parse(text: str) -> str | None:
        if text.lower() == "default":
            return None
        if text.lower() not in choices:
            raise argparse.ArgumentTypeError(f"use default or one of {', '.join(choices)}, not {text!r}")
        return text.lower()

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, not {text}")
    return value


def _until(text: str) -> str:
    until = normal_until(text)
    if not valid_until(until):
        raise argparse.ArgumentTypeError(f"use first_step, first_inference, exit or mark:NAME (NAME as your "
                                         f"program passes it to mark()), not {text!r}")
    return until


class _XlaSplit(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        parser.error("--xla is two settings now: --xla-auto (XLA auto-clustering, applied to any program "
                     "through TF_XLA_FLAGS) or --jit-compile (tflaunch compiles the model with XLA; "
                     "measurement only).")


def add_config_arguments(parser: argparse.ArgumentParser, *, model_required: bool) -> None:
    def help_of(name: str) -> str:
        return BY_NAME[name].help.replace("%", "%%")

    parser.add_argument("--profile", metavar="NAME", help="start from a saved launch profile's settings; other "
                        "flags given as well change them. A profile that runs code needs `profiles trust` first.")
    model_help = help_of("model") + (" Required unless --profile names one." if model_required else "")
    parser.add_argument("--model", default=None, help=model_help)
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
    parser.add_argument("--allocator", type=_word(ALLOCATORS),
                        metavar="default|" + "|".join(ALLOCATORS), help=help_of("allocator"))
    parser.add_argument("--cudnn-autotune", type=_tristate, default=None, metavar="default|on|off",
                        help=help_of("cudnn_autotune"))
    parser.add_argument("--grappler", type=_word(GRAPPLER), metavar="default|" + "|".join(GRAPPLER),
                        help=help_of("grappler"))
    parser.add_argument("--module-loading", type=_word(MODULE_LOADING),
                        metavar="default|" + "|".join(MODULE_LOADING), help=help_of("module_loading"))
    parser.add_argument("--cuda-cache", type=_word(CACHE_STATES),
                        metavar="default|" + "|".join(CACHE_STATES), help=help_of("cuda_cache"))
    parser.add_argument("--xla-cache", action="store_true", help=help_of("xla_cache"))
    parser.add_argument("--page-cache", choices=tuple(PAGE_CACHE_STATES), default="warm",
                        help=help_of("page_cache") + " Default: warm.")
    parser.add_argument("--nvtx", action="store_true", help=help_of("nvtx"))
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
    parser.add_argument("--call", choices=tuple(CALLS), default="function", help=help_of("call"))
    parser.add_argument("--until", type=_until, default="first_step", metavar="first_step|first_inference|exit|"
                        "mark:NAME", help=help_of("until") + " Default: first_step.")
    parser.add_argument("--cwd", dest="workdir", default="", metavar="FOLDER", help=help_of("workdir"))
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=help_of("timeout") + f" Default {DEFAULT_TIMEOUT_S:.0f}.")


class SettingsError(Exception):
    """The settings asked for cannot be put together; `kind` as in a failure's JSON."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


# Argument destination -> the LaunchConfig field it sets, where the names differ.
_FIELD_OF = {"gpus": "visible_gpus", "memory_limit": "memory_limit_mb", "env": "extra_env"}


def _given(args: argparse.Namespace) -> list[str]:
    """The settings' argument destinations the user typed (their value is not the default)."""
    parser = argparse.ArgumentParser(add_help=False)
    add_config_arguments(parser, model_required=False)
    defaults = vars(parser.parse_args([]))
    return [dest for dest, default in defaults.items()
            if dest not in ("profile", "xla") and getattr(args, dest, default) != default]


def add_program_argument(parser: argparse.ArgumentParser) -> None:
    """The program subject: everything after `--` is the user's own command line."""
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                        help=BY_NAME["program"].help + " A bare python means --python. Instead of --model.")


def program_of(args: argparse.Namespace) -> tuple[str, ...]:
    argv = list(getattr(args, "program", None) or [])
    return tuple(argv[1:] if argv[:1] == ["--"] else argv)


def config_from_args(args: argparse.Namespace, *, model_required: bool = False) -> LaunchConfig:
    """The settings of a command: its flags, on top of --profile's settings when one is named.

    Raises SettingsError (no model, or a profile that cannot be used: missing, broken or
    running code its user has not accepted)."""
    flags = _flag_config(args)
    program = program_of(args)
    if program and args.model:
        raise SettingsError("invalid_arguments", "Give either a model (--model) or a program (after --), not "
                                                 "both: a run measures one subject.")
    name = getattr(args, "profile", None)
    if not name:
        if model_required and not args.model and not program:
            raise SettingsError("invalid_arguments", "Give the model with --model PATH (or sample:NAME), your "
                                                     "program after -- (-- python train.py), or name a saved "
                                                     "profile with --profile NAME.")
        return flags
    try:
        profile = ProfileStore(profiles_dir()).load_for_launch(name)
    except UntrustedProfileError as exc:
        raise SettingsError("untrusted_profile", str(exc)) from None
    except ProfileError as exc:
        raise SettingsError("invalid_profile", str(exc)) from None
    base, changes = profile.config, {}
    for dest in _given(args):
        key = _FIELD_OF.get(dest, dest)
        value = getattr(flags, key)
        if key in ("extra_env", "inputs"):  # added to the profile's own
            value = {**getattr(base, key), **value}
        elif key == "imports":
            value = (*base.imports, *value)
        changes[key] = value
    if program:
        changes["program"] = program
    return base.replace(**changes)


def _flag_config(args: argparse.Namespace) -> LaunchConfig:
    return LaunchConfig(
        model=args.model or LaunchConfig.model, python=args.python, intra=args.intra, inter=args.inter,
        xla_auto=args.xla_auto, jit_compile=args.jit_compile, onednn=args.onednn, log_level=args.log_level,
        visible_gpus=args.gpus, memory_growth=args.memory_growth, memory_limit_mb=args.memory_limit,
        allocator=args.allocator, cudnn_autotune=args.cudnn_autotune, module_loading=args.module_loading,
        grappler=args.grappler,
        cuda_cache=args.cuda_cache, xla_cache=args.xla_cache, page_cache=args.page_cache, nvtx=args.nvtx,
        extra_env=dict(args.env), batch=args.batch, inputs=dict(args.inputs), signature=args.signature,
        imports=tuple(args.imports), unsafe_deserialization=args.unsafe_deserialization, steady=args.steady,
        timeout=args.timeout, call=args.call, until=args.until, workdir=args.workdir, program=program_of(args),
    )


def failure_json(kind: str, message: str, field: str | None = None) -> dict[str, Any]:
    """What --json prints when nothing ran: the same status, kind and message a run has."""
    return {"protocol": PROTOCOL_VERSION, "status": "failed", "runs": [],
            "failure": {"kind": kind, "message": message, **({"field": field} if field else {})},
            "summary": {"ok": 0, "runs": 0, "phases": None, "time_to_ready": None}}


def print_problems(problems: list[Any]) -> None:
    """Each problem after the option it is about: the messages are the app's words too."""
    for p in problems:
        option = BY_NAME[p.field].cli if p.field in BY_NAME else p.field
        print(f"tflaunch: {option}: {p.message}", file=sys.stderr)
