"""`tflaunch serving-warmup`: a SavedModel's TensorFlow Serving warm-up file, written from the
inputs a run feeds and proven by replaying it through the model's signatures.

No model server is needed, or used: the probe reads the file back and calls each request's
signature as TF Serving does when it loads the model (see the README).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..probe.failure import ProbeFailure
from ..probe.model.convert import saved_path
from ..probe.model.model_files import model_format
from ..probe.serving.warmup_file import FOLDER, MAX_RECORDS, NAME, check_target, saved_model_dir, warmup_path
from ..run.formats import ConversionError, convert
from ..run.launch_check import launch_check
from ..run.serving_warmup import WarmupError, WarmupReport, run_warmup
from ..settings.config import LaunchConfig
from ..units import format_duration
from .arguments import SettingsError, add_config_arguments, config_from_args, print_problems
from .command_tools import refuse
from .numbers import whole


def _records(text: str) -> int:
    try:
        value = whole(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a whole number of records, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    if value > MAX_RECORDS:
        raise argparse.ArgumentTypeError(f"TF Serving reads at most {MAX_RECORDS} warm-up records and refuses to "
                                         f"load a model whose file holds more; give at most {MAX_RECORDS}, not {value}")
    return value


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    warmup = sub.add_parser("serving-warmup", help=f"write a SavedModel's TF Serving warm-up file ({FOLDER}/{NAME}) "
                            "from the inputs a run feeds, replaying it to prove it; --check replays an existing one")
    add_config_arguments(warmup, model_required=True)
    warmup.add_argument("--check", action="store_true", help="replay the model's warm-up file (or --file) on a "
                        "fresh load, record by record, instead of writing one")
    warmup.add_argument("--file", metavar="PATH", help=f"with --check: the warm-up file to replay (default: the "
                        f"model's own {FOLDER}/{NAME})")
    warmup.add_argument("--records", type=_records, default=None, metavar="N", help="copies of the request to write "
                        f"(default 1; TF Serving takes at most {MAX_RECORDS})")
    warmup.add_argument("--serving-name", metavar="NAME", help="model_spec.name in each request (default: the "
                        "SavedModel's folder name, or the one above a version folder such as /models/NAME/1)")
    warmup.add_argument("--force", action="store_true", help="replace a warm-up file that exists already")
    warmup.add_argument("--export-to", metavar="FOLDER", help="for a .keras or .h5 model or a sample: export it as "
                        "a SavedModel into FOLDER first, and write the warm-up file into that")
    warmup.add_argument("--json", action="store_true", help="print machine-readable results on stdout")


def _conflicts(args: argparse.Namespace, config: LaunchConfig) -> str | None:
    if config.is_program:
        return "serving-warmup is about a SavedModel: give it with --model, not a program after --."
    if args.check and (args.records or args.force or args.export_to or args.serving_name):
        return "--check replays the file as it is: --records, --force, --export-to and --serving-name write one."
    if args.file and not args.check:
        return "--file names a warm-up file to replay: give --check with it (a written file goes into the SavedModel)."
    return None


def _export(args: argparse.Namespace, config: LaunchConfig) -> LaunchConfig:
    """The model exported as a SavedModel under --export-to, as the config's model."""
    model = config.model
    if model_format(os.path.abspath(os.path.expanduser(model))) == "savedmodel" and not model.startswith("sample:"):
        raise ProbeFailure("invalid_arguments", f"{model} is a SavedModel already: --export-to is for a .keras or "
                           ".h5 model or a sample. Leave it out and the file is written into the SavedModel.")
    stem = model[len("sample:"):] if model.startswith("sample:") else Path(model).stem
    folder = saved_path(args.export_to, stem, "savedmodel")
    if os.path.lexists(warmup_path(folder)) and not args.force:  # said now, not after the export
        check_target(folder, force=False)
    try:
        exported = convert(config.python, model, ["savedmodel"], Path(args.export_to))["savedmodel"]
    except ConversionError as exc:
        raise ProbeFailure("cannot_export", f"{exc} Export it yourself (model.export('FOLDER')) and give that "
                           "folder as --model.") from None
    print(f"tflaunch: exported {model} as a SavedModel: {exported}", file=sys.stderr)
    return config.replace(model=str(exported))


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args, model_required=True)
    except SettingsError as exc:
        return refuse(exc.kind, exc.message, args.json)
    if conflict := _conflicts(args, config):
        return refuse("invalid_arguments", conflict, args.json)
    try:
        if args.export_to:
            config = _export(args, config)
        if args.check:  # the probe checks again; this says it before any child starts
            path = args.file or warmup_path(saved_model_dir(config.model))
            if not os.path.lexists(path):
                raise ProbeFailure("warmup_not_found", f"There is no warm-up file at {path}. Write one with "
                                   f"`tflaunch serving-warmup --model {config.model}`.")
        else:
            check_target(config.model, args.force)
    except ProbeFailure as exc:
        return refuse(exc.kind, exc.message, args.json)
    problems = launch_check(config)
    if problems:
        print_problems(problems)
        return 2
    options: dict[str, Any] = {"records": args.records or 1, "force": args.force,
                               "serving_name": args.serving_name, "file": args.file}
    try:
        report = run_warmup(config, "check" if args.check else "write", options)
    except WarmupError as exc:
        return refuse(exc.kind, exc.message, args.json)
    say_problems(report)  # on stderr, so in --json mode too
    # A check that replayed nothing (every record skipped) proved nothing: not a success.
    ok = report.ok and (report.action != "check" or any(o.status == "ok" for o in report.outcomes))
    if args.json:
        print(json.dumps({"status": "ok" if ok else "failed", "serving_warmup": report.to_dict()}, indent=2))
    else:
        print_report(report)
    return 0 if ok else 1


def replay_line(report: WarmupReport) -> str:
    """'3 records, all replayed in 12.1 ms', or how many failed."""
    count = f"{report.records} record{'s' if report.records != 1 else ''}"
    ran = [o for o in report.outcomes if o.status == "ok"]
    took = format_duration(sum(o.seconds or 0.0 for o in ran))
    if report.ok and len(ran) == report.records:
        return f"{count}, all replayed in {took}"
    skipped = sum(1 for o in report.outcomes if o.status == "skipped")
    parts = [f"{len(ran)} replayed in {took}"] if ran else []
    parts += [f"{len(report.failed)} failed"] if report.failed else []
    parts += [f"{skipped} skipped (not Predict requests)"] if skipped else []
    parts += ["the rest cannot be read" if report.records else "the file cannot be read"] if report.damage else []
    return f"{count}: {', '.join(parts) or 'nothing to replay'}"


def say_problems(report: WarmupReport) -> None:
    """Each record that did not replay, with the file, its number, the cause and what to do."""
    for outcome in report.outcomes:
        if outcome.status != "ok":
            print(f"tflaunch: {report.path}: record {outcome.record}: {outcome.reason}", file=sys.stderr)
    if report.damage:
        print(f"tflaunch: {report.path}: {report.damage}", file=sys.stderr)
    if report.records == 0 and not report.damage:
        print(f"tflaunch: {report.path} holds no records: TF Serving would load the model without warming it up. "
              "Write it again with `tflaunch serving-warmup --force --model MODEL`.", file=sys.stderr)
    if report.failed or report.damage:
        print("tflaunch: TF Serving stops loading a model at the first warm-up record that fails.", file=sys.stderr)
    if report.action == "write" and not report.written:
        print("tflaunch: the file did not replay, so nothing was put in place.", file=sys.stderr)


def print_report(report: WarmupReport) -> None:
    if report.action == "check":
        print(f"{replay_line(report)} ({report.path})")
        return
    print(f"{'wrote' if report.written else 'did not write'} {report.path}")
    print(f"  model_spec: name {report.serving_name!r}, signature {report.signature}")
    print(f"  inputs as a run feeds them: {', '.join(report.inputs)}")
    print(f"  read back: {replay_line(report)} (after the model's first call; `--check` replays on a fresh load, "
          "as TF Serving does)")
