"""`tflaunch sample`: save a built-in sample model to files, to try tflaunch on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..probe.model.convert import FORMATS
from ..run.formats import ConversionError, convert
from ..settings.vocabulary import SAMPLE_MODELS


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sample = sub.add_parser("sample", help="save a built-in sample model to files")
    sample.add_argument("name", choices=SAMPLE_MODELS)
    sample.add_argument("--out", required=True, help="folder to write into")
    sample.add_argument("--format", action="append", choices=FORMATS,
                        help="format to save (repeatable; default all three)")
    sample.add_argument("--python", default=sys.executable)


def run(args: argparse.Namespace) -> int:
    try:
        saved = convert(args.python, f"sample:{args.name}", args.format or list(FORMATS), Path(args.out))
    except ConversionError as exc:
        print(f"tflaunch: {exc}", file=sys.stderr)
        return 1
    for fmt, path in saved.items():
        print(f"{fmt:<10} {path}")
    return 0
