"""The `tflaunch` command line: headless commands, and the `gui` command's arguments.

The GUI itself lives in tflaunch.gui; its entry point hands this module a launcher, so
core stays importable (and `tflaunch bench` runs) where Qt is not installed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Callable, Sequence

from . import events, profile_commands, report_command, sweep_command
from .config import DEFAULT_TIMEOUT_S, PROBE_PATH, SAMPLE_MODELS, LaunchConfig
from .history import HistoryError, default_history
from .paths import profiles_dir
from .profiles import Profile, ProfileError, ProfileStore, evidence_from_runs
from .phases import LABELS, PHASES
from .run import RunRecord, RunStatus
from .runner import run_probe
from .stats import summarize
from .table import repeat_table, run_table
from .units import format_bytes, format_duration

GuiLauncher = Callable[[argparse.Namespace], int]


def _positive_int(text: str) -> int:
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
    try:
        return tuple(int(i) for i in text.split(",") if i.strip() != "")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GPU indices like 0,1, not {text!r}") from None


def add_config_arguments(parser: argparse.ArgumentParser, *, model_required: bool) -> None:
    parser.add_argument("--model", required=model_required, default=None,
                        help="SavedModel folder, .keras or .h5 file, or sample:" + "|".join(SAMPLE_MODELS))
    parser.add_argument("--python", default=sys.executable, help="interpreter to run the probe (default: this one)")
    parser.add_argument("--intra", type=int, default=0, help="intra-op threads (0 = TensorFlow's default)")
    parser.add_argument("--inter", type=int, default=0, help="inter-op threads (0 = TensorFlow's default)")
    parser.add_argument("--xla", action="store_true", help="XLA JIT: auto-clustering and jit_compile")
    parser.add_argument("--no-onednn", action="store_true", help="TF_ENABLE_ONEDNN_OPTS=0")
    parser.add_argument("--log-level", type=int, choices=range(4), help="TF_CPP_MIN_LOG_LEVEL")
    parser.add_argument("--gpus", type=_gpu_list, help="visible GPUs, e.g. 0,1 (CUDA_VISIBLE_DEVICES)")
    parser.add_argument("--memory-growth", action="store_true", help="grow GPU memory as needed")
    parser.add_argument("--memory-limit", type=int, metavar="MIB", help="per-GPU memory limit in MiB")
    parser.add_argument("--env", type=_env_pair, action="append", default=[], metavar="NAME=VALUE",
                        help="extra environment variable for the child (repeatable)")
    parser.add_argument("--batch", type=_positive_int, default=1, help="batch size of generated inputs")
    parser.add_argument("--steady", type=int, default=20, help="inferences measured after the first")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"stop a run that takes longer (default {DEFAULT_TIMEOUT_S:.0f})")


def config_from_args(args: argparse.Namespace) -> LaunchConfig:
    return LaunchConfig(
        model=args.model, python=args.python, intra=args.intra, inter=args.inter, xla=args.xla,
        onednn=False if args.no_onednn else None, log_level=args.log_level, visible_gpus=args.gpus,
        memory_growth=args.memory_growth, memory_limit_mb=args.memory_limit,
        extra_env=dict(args.env), batch=args.batch, steady=args.steady, timeout=args.timeout,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tflaunch", description="Measure and tune TensorFlow start-up.")
    sub = parser.add_subparsers(dest="command")
    bench = sub.add_parser("bench", help="run the probe headless and print a phase table")
    add_config_arguments(bench, model_required=True)
    bench.add_argument("--repeat", type=_positive_int, default=1, help="fresh processes to run (median, min–max)")
    bench.add_argument("--json", action="store_true", help="print machine-readable results on stdout")
    bench.add_argument("--save-profile", metavar="NAME", help="save these settings and results as a launch profile")
    bench.add_argument("--no-history", action="store_true", help="do not store the runs in the run history")
    sample = sub.add_parser("sample", help="save a built-in sample model to files")
    sample.add_argument("name", choices=SAMPLE_MODELS)
    sample.add_argument("--out", required=True, help="folder to write into")
    sample.add_argument("--format", action="append", choices=("keras", "h5", "savedmodel"),
                        help="format to save (repeatable; default all three)")
    sample.add_argument("--python", default=sys.executable)
    profile_commands.add_arguments(sub)
    sweep_command.add_arguments(sub, add_config_arguments)
    report_command.add_arguments(sub)
    gui = sub.add_parser("gui", help="open the app (default when no command is given)")
    add_config_arguments(gui, model_required=False)
    gui.add_argument("--run", action="store_true", help="start a run as soon as the window opens")
    return parser


class Progress:
    """Live phase progress on stderr: one rewritten line on a terminal, plain lines elsewhere."""

    def __init__(self, stream=sys.stderr, prefix: str = "") -> None:
        self.stream, self.prefix = stream, prefix
        self.live = stream.isatty()
        self._reported: set[str] = set()
        self._last_draw = 0.0

    def __call__(self, record: RunRecord) -> None:
        for name, phase in record.phases.items():
            if phase.duration is not None and phase.state.value == "done" and name not in self._reported:
                self._reported.add(name)
                self._write(f"{self.prefix}{LABELS[name]:<16} {format_duration(phase.duration):>9}"
                            f"   RSS {format_bytes(phase.rss)}", final=True)
        now = time.monotonic()
        if self.live and record.status is RunStatus.RUNNING and now - self._last_draw > 0.1:
            self._last_draw = now
            current = record.current_phase or "steady"
            started = record.phases[current].started or record.launched_at
            rss = record.samples[-1][1] if record.samples else None
            self._write(f"{self.prefix}{LABELS[current]:<16} {format_duration(time.time() - started):>9}"
                        f"   RSS {format_bytes(rss)} …", final=False)

    def _write(self, text: str, final: bool) -> None:
        if self.live:
            self.stream.write("\r\033[K" + text + ("\n" if final else ""))
        elif final:
            self.stream.write(text + "\n")
        self.stream.flush()


def bench(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    problems = config.validate()
    if problems:
        for p in problems:
            print(f"tflaunch: {p.field}: {p.message}", file=sys.stderr)
        return 2
    records = []
    for i in range(args.repeat):
        prefix = f"[{i + 1}/{args.repeat}] " if args.repeat > 1 else ""
        record = run_probe(config, on_update=Progress(prefix=prefix))
        records.append(record)
        if record.status is RunStatus.CANCELLED:
            break
    if not args.no_history:
        _store_in_history(records)
    failed = [r for r in records if r.status is not RunStatus.OK]
    if args.save_profile:
        try:
            path = ProfileStore(profiles_dir()).save(
                Profile(args.save_profile, config, evidence_from_runs(records)), overwrite=True)
            print(f"tflaunch: saved profile {args.save_profile} ({path})", file=sys.stderr)
        except ProfileError as exc:
            print(f"tflaunch: profile not saved: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(_json_result(records), indent=2))
    elif len(records) == 1:
        print(run_table(records[0]))
    else:
        print(repeat_table(records))
    for record in failed:
        excerpt = record.failure.detail if record.failure else ""
        for line in excerpt.splitlines()[-8:]:
            print(f"  | {line}", file=sys.stderr)
        print(f"tflaunch: {record.headline}", file=sys.stderr)
    return 1 if failed else 0


def _store_in_history(records: list[RunRecord]) -> None:
    try:
        history = default_history()
    except HistoryError as exc:
        print(f"tflaunch: runs not stored: {exc}", file=sys.stderr)
        return
    for record in records:
        record.history_id = history.record(record, "cli")
    history.close()


def _json_result(records: list[RunRecord]) -> dict:
    ok = [r for r in records if r.status is RunStatus.OK]
    phases = {}
    for name in PHASES:
        summary = summarize(r.phases[name].duration for r in ok)
        phases[name] = summary.to_dict() if summary else None
    ready = summarize(r.time_to_ready for r in ok)
    return {
        "protocol": events.PROTOCOL_VERSION,
        "runs": [r.to_dict() for r in records],
        "summary": {"ok": len(ok), "runs": len(records), "phases": phases,
                    "time_to_ready": ready.to_dict() if ready else None},
    }


def save_sample(args: argparse.Namespace) -> int:
    command = [args.python, str(PROBE_PATH), "--save-sample", args.name, "--out", args.out]
    for fmt in args.format or ():
        command += ["--format", fmt]
    parser = events.EventParser()
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as exc:
        print(f"tflaunch: could not start {args.python}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    code = 0
    for line in done.stdout.splitlines():
        event = parser.parse(line)
        if isinstance(event, events.Saved):
            print(f"{event.format:<10} {event.path}")
        elif isinstance(event, events.ProbeError):
            print(f"tflaunch: {event.message}", file=sys.stderr)
            code = 1
    return code or (1 if done.returncode else 0)


def main(argv: Sequence[str] | None = None, gui_launcher: GuiLauncher | None = None,
         review_renderer: report_command.Renderer | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv or ["gui"])
    if args.command == "bench":
        return bench(args)
    if args.command == "sample":
        return save_sample(args)
    if args.command == "run":
        return profile_commands.run_command(args)
    if args.command == "profiles":
        return profile_commands.profiles_command(args)
    if args.command == "sweep":
        return sweep_command.run(args, config_from_args(args))
    if args.command == "report":
        return report_command.run(args, review_renderer)
    if gui_launcher is None:
        print("tflaunch: the GUI is not available here; install tflaunch with PySide6, "
              "or use `tflaunch bench`.", file=sys.stderr)
        return 2
    return gui_launcher(args)


if __name__ == "__main__":
    sys.exit(main())
