"""The settings as command-line arguments: flags and help from the one settings table."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..paths import profiles_dir
from ..phases import normal_until
from ..probe.model.input_shapes import InputSpecError, spec_text
from ..probe.model.input_shapes import parse as parse_input
from ..run.program import normal_subject
from ..run.protocol import PROTOCOL_VERSION
from ..settings.config import LaunchConfig, valid_until
from ..settings.display import setting_text
from ..settings.setting import Kind, Setting
from ..settings.vocabulary import BY_NAME, SETTINGS
from ..store.checked_launch import as_written
from ..store.profiles import ProfileError, ProfileStore, UntrustedProfileError
from ..subject import Subject
from .numbers import positive_whole, whole

positive_int = positive_whole  # the commands' --repeat: ASCII digits, 1 or more


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


def _typed(setting: Setting) -> Any:
    """The setting's own reading of a value typed after its flag, as argparse wants it."""
    def parse(text: str) -> Any:
        try:
            return setting.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{exc}, not {text!r}") from None

    return parse


def _until(text: str) -> str:
    until = normal_until(text)
    if not valid_until(until):
        words = ", ".join(BY_NAME["until"].words())
        raise argparse.ArgumentTypeError(f"use {words} or mark:NAME (NAME as your program passes it to mark()), "
                                         f"not {text!r}")
    return until


class _XlaSplit(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        parser.error("--xla is two settings now: --xla-auto (XLA auto-clustering, applied to any program "
                     "through TF_XLA_FLAGS) or --jit-compile (tflaunch compiles the model with XLA; "
                     "measurement only).")


# What a value looks like after its flag, where the setting's kind does not say it.
_METAVARS = {"model": "PATH", "python": "PYTHON", "visible_gpus": "0,1|none", "memory_limit_mb": "MIB",
             "extra_env": "NAME=VALUE", "inputs": "NAME=D1xD2[:DTYPE]", "signature": "NAME",
             "imports": "MODULE_OR_FILE", "workdir": "FOLDER", "timeout": "SECONDS", "intra": "N", "inter": "N",
             "batch": "N", "steady": "N", "until": "|".join([*BY_NAME["until"].words(), "mark:NAME"])}
# Readers for the values whose text is more than one word, by setting.
_READERS = {"visible_gpus": _gpu_list, "extra_env": _env_pair, "inputs": _input_spec, "until": _until}
# Said after a setting's help on the command line only.
_CLI_NOTES = {"visible_gpus": " E.g. 0,1 or none.", "python": " Default: this one."}


def add_config_arguments(parser: argparse.ArgumentParser, *, model_required: bool) -> None:
    """A flag for every setting (the program is the positional after --: add_program_argument),
    each as its SETTINGS entry declares it: kind, choices, default and help."""
    parser.add_argument("--profile", metavar="NAME", help="start from a saved launch profile's settings; other "
                        "flags given as well change them. A profile that runs code needs `profiles trust` first.")
    for setting in SETTINGS:
        if setting.name != "program":
            _add_flag(parser, setting, model_required=model_required)
    parser.add_argument("--no-onednn", dest="onednn", action="store_const", const=False,
                        help="the same as --onednn off")
    parser.add_argument("--xla", nargs=0, action=_XlaSplit, help=argparse.SUPPRESS)


def _add_flag(parser: argparse.ArgumentParser, setting: Setting, *, model_required: bool) -> None:
    name, kind = setting.name, setting.kind
    text = (setting.help + _CLI_NOTES.get(name, "") + _default_note(setting)).replace("%", "%%")
    if name == "model" and model_required:
        text += " Required unless --profile names one."
    if kind is Kind.SWITCH:
        parser.add_argument(setting.cli, dest=name, action="store_true", help=text)
        return
    options: dict[str, Any] = {"dest": name, "help": text, "metavar": _METAVARS.get(name)}
    if kind in (Kind.LIST, Kind.PAIRS):
        options.update(action="append", default=[], help=text + " Repeatable.")
    else:
        # The model's flag stays None when not typed, so a --profile's model is kept.
        options["default"] = None if name == "model" else setting.fresh_default()
    if name in _READERS:
        options["type"] = _READERS[name]
    elif kind in (Kind.CHOICE, Kind.TRISTATE, Kind.MIB, Kind.SECONDS):
        options["type"] = _typed(setting)
    elif kind is Kind.COUNT:
        options["type"] = whole  # out of bounds, the launch check names the flag in the app's words
    if options["metavar"] is None and kind in (Kind.CHOICE, Kind.TRISTATE):
        options["metavar"] = "|".join(setting.words())
    parser.add_argument(setting.cli, **options)


def _default_note(setting: Setting) -> str:
    """" Default: warm." for a setting whose default is a value to name (not TensorFlow's own)."""
    if setting.kind in (Kind.SWITCH, Kind.LIST, Kind.PAIRS, Kind.TEXT) or setting.default is None \
            or setting.is_unset(setting.default):
        return ""
    return f" Default: {setting_text(setting.name, setting.default)}."


class SettingsError(Exception):
    """The settings asked for cannot be put together; `kind` as in a failure's JSON."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


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
    """The settings of a command: its flags, on top of --profile's settings when one is named,
    the program's command line read once (an interpreter as its first word is --python).

    Raises SettingsError (no model, or a profile that cannot be used: missing, broken or
    running code its user has not accepted)."""
    flags = _flag_config(args)
    program = program_of(args)
    if program and args.model:
        raise SettingsError("invalid_arguments", "Give either a model (--model) or a program (after --), not "
                                                 "both: a run measures one subject.")
    _refuse_unread(args)
    name = getattr(args, "profile", None)
    if not name:
        if model_required and not args.model and not program:
            raise SettingsError("invalid_arguments", "Give the model with --model PATH (or sample:NAME), your "
                                                     "program after -- (-- python train.py), or name a saved "
                                                     "profile with --profile NAME.")
        return normal_subject(flags)
    try:
        profile = ProfileStore(profiles_dir()).load_for_launch(name)
    except UntrustedProfileError as exc:
        raise SettingsError("untrusted_profile", str(exc)) from None
    except ProfileError as exc:
        raise SettingsError("invalid_profile", str(exc)) from None
    base, changes = profile.config, {}
    if getattr(args, "on", None) == "slurm":  # trials run later, elsewhere: from the files named, not this
        base = as_written(base)               # process's private copies (gone when it ends)
    for key in _given(args):
        value = getattr(flags, key)
        if key in ("extra_env", "inputs"):  # added to the profile's own
            value = {**getattr(base, key), **value}
        elif key == "imports":
            value = (*base.imports, *value)
        changes[key] = value
    if program:
        changes["program"] = program
    return normal_subject(base.replace(**changes))


def _refuse_unread(args: argparse.Namespace) -> None:
    """A flag typed for a setting this subject does not read would change nothing: said, not
    ignored (`--jit-compile -- python train.py`: a program compiles its own model)."""
    if not program_of(args):
        return
    for dest in _given(args):
        setting = BY_NAME.get(dest)
        why = setting.why_unread(Subject.PROGRAM) if setting is not None else None
        if setting is not None and why:
            raise SettingsError("invalid_arguments", f"{setting.cli} is not read by a program ({why}), so it "
                                                     "would change nothing: leave it out, or measure a model "
                                                     "with --model instead.")


def _flag_config(args: argparse.Namespace) -> LaunchConfig:
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        value: Any = program_of(args) if setting.name == "program" else getattr(args, setting.name)
        if isinstance(setting.default, dict):
            value = dict(value)
        elif isinstance(value, list):
            value = tuple(value)
        values[setting.name] = value
    values["model"] = args.model or LaunchConfig.model
    return LaunchConfig(**values)


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
