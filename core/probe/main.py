"""The probe's command line (the child's argv), for each of its modes::

    python .../probe/__main__.py '{"model": "sample:mlp", "steady": 20}'
    python .../probe/__main__.py --config run.json
    python .../probe/__main__.py --convert model.keras --format h5 --format savedmodel --out /tmp/models
    python .../probe/__main__.py --convert sample:wide --format keras --out /tmp/models
    python .../probe/__main__.py --known-xla-flags [--cache FILE]
    python .../probe/__main__.py --serving-warmup write|check '{"model": "/models/mlp/1", ...}'
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from typing import Any, Optional, Sequence

from .channel import Channel
from .failure import ProbeFailure
from .model.convert import convert
from .model.explain import explain
from .model.model_files import FORMATS
from .model.runner import Probe
from .process import exit_with_parent
from .terminal import leave_terminal


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tflaunch-probe", description="tflaunch probe")
    parser.add_argument("config", nargs="?", help="run configuration as JSON")
    parser.add_argument("--config", dest="config_file", help="read the configuration from a file")
    parser.add_argument("--convert", metavar="MODEL", help="save a model (or sample:NAME) in other formats")
    parser.add_argument("--format", action="append", choices=FORMATS, help="format(s) to save")
    parser.add_argument("--out", help="folder for --convert")
    parser.add_argument("--known-xla-flags", action="store_true", help="print the TF_XLA_FLAGS names TensorFlow knows")
    parser.add_argument("--cache", help="cache file for --known-xla-flags")
    parser.add_argument("--serving-warmup", choices=("write", "check"),
                        help="write a SavedModel's TF Serving warm-up file from the inputs a run feeds, or replay it")
    return parser


def _read_config(args: argparse.Namespace) -> dict[str, Any]:
    if args.config_file:
        with open(args.config_file, encoding="utf-8") as f:
            config = json.load(f)
    else:
        config = json.loads(args.config or "{}")
    if not isinstance(config, dict) or not isinstance(config.get("model"), str):
        raise ProbeFailure("bad_config", "The probe's configuration needs a 'model' string.")
    return config


def _launcher(args: argparse.Namespace) -> Optional[int]:
    """The launcher's pid, when the configuration names it (for exit_with_parent's check)."""
    try:
        pid = _read_config(args).get("launcher_pid")
    except Exception:  # the run reports a bad configuration itself, below
        return None
    return pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 1 else None


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.known_xla_flags:
        from .xla_flags import known_flags

        print(json.dumps({"flags": known_flags(args.cache)}), flush=True)
        return
    channel = Channel()
    exit_with_parent(_launcher(args))
    leave_terminal()  # in the launcher's session, a background job: no terminal to stop it
    probe = None
    code = 0
    try:
        if args.convert:
            convert(channel, args.convert, args.format or list(FORMATS), args.out or ".")
        elif args.serving_warmup:
            from .serving.serving_warmup import serving_warmup

            serving_warmup(channel, args.serving_warmup, _read_config(args))
        else:
            probe = Probe(channel, _read_config(args))
            probe.run()
    except ProbeFailure as exc:
        message, spec = exc.message, probe.config["model"] if probe else ""
        if probe and probe.current in ("load", "trace", "first", "steady") and spec not in message:
            message = f"{spec}: {message}"  # a failure after load names the model it is about
        channel.emit("error", probe.current if probe else "load", kind=exc.kind, message=message, detail="")
        code = 2
    except Exception as exc:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-12:])
        phase = probe.current if probe else "load"
        message = explain(exc, probe.config, probe.fed) if probe else f"{type(exc).__name__}: {exc}"
        channel.emit("error", phase, kind="exception", message=message, detail=detail)
        code = 3
    sys.stderr.flush()
    # Skip interpreter teardown: after TensorFlow it costs over half a second per run.
    os._exit(code)
