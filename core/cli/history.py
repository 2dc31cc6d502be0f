"""`tflaunch history`: the stored runs from a terminal: list, show, delete, export.

`list` gives the ids that `tflaunch report` and `history show` take. Every action filters
the same way (--model, --status, --since, --until, --limit) and answers in JSON with --json.
The history's own messages (HistoryError: locked, damaged, read-only) are said as they are.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from pathlib import Path

from ..paths import history_path
from ..report import exports
from ..report.imports import import_table
from ..report.run_export import ExportedRun, local_time, summary_dict
from ..report.table import run_table
from ..run.record import RunRecord, RunStatus
from ..safe_text import shown, shown_lines
from ..store.atomic import atomic_write
from ..store.history import History, HistoryError
from ..store.rows import DAMAGED, RunSummary
from ..units import format_bytes, format_duration
from .arguments import failure_json, positive_int
from .numbers import whole

STATUSES = [*(s.value for s in RunStatus), DAMAGED]
DATE_HELP = "a date (2026-11-01), a local date and time ('2026-11-01 14:30') or an age (7d, 12h)"
LIST_LIMIT = 50


class CommandError(Exception):
    """What the command could not do: the message names the input, the cause, what to do."""

    def __init__(self, kind: str, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.kind, self.message, self.code = kind, message, code


# -- arguments ---------------------------------------------------------------------------------
def _statuses(text: str) -> list[str]:
    wanted = []
    for part in text.split(","):
        status = part.strip().lower().replace("-", " ").replace("_", " ")
        if status not in STATUSES:
            names = ", ".join(s.replace(" ", "-") for s in STATUSES)
            raise argparse.ArgumentTypeError(f"expected one or more of {names} (comma-separated), not {part!r}")
        wanted.append(status)
    return wanted


def _moment(text: str, end_of_day: bool) -> float:
    """A Unix time from what a user types; a date alone is its start (or, for --until, its end)."""
    text = text.strip()
    age = re.fullmatch(r"(\d+)\s*([dh])", text)
    if age:
        return time.time() - int(age[1]) * (86400 if age[2] == "d" else 3600)
    try:
        day = date.fromisoformat(text)
    except ValueError:
        pass
    else:
        start = datetime(day.year, day.month, day.day)
        return (start + timedelta(days=1) if end_of_day else start).timestamp()
    try:
        return datetime.fromisoformat(text).timestamp()  # naive: local time
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {DATE_HELP}, not {text!r}") from None


def _since(text: str) -> float:
    return _moment(text, end_of_day=False)


def _until(text: str) -> float:
    return _moment(text, end_of_day=True)


def _add_filters(parser: argparse.ArgumentParser, limit: int | None) -> None:
    parser.add_argument("--model", metavar="TEXT", help="runs whose model contains TEXT (sample:mlp, a file name)")
    parser.add_argument("--status", type=_statuses, metavar="STATUS[,STATUS]",
                        help="runs with these statuses: " + ", ".join(s.replace(" ", "-") for s in STATUSES))
    parser.add_argument("--since", type=_since, metavar="WHEN", help=f"runs launched then or later: {DATE_HELP}")
    parser.add_argument("--until", type=_until, metavar="WHEN",
                        help="runs launched before then; a date alone includes that whole day")
    parser.add_argument("--limit", type=positive_int, default=limit, metavar="N",
                        help="the newest N runs" + (f" (default {limit})" if limit else ""))
    parser.add_argument("--json", action="store_true", help="print machine-readable results on stdout")


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    history = sub.add_parser("history", help="list, show, delete or export the stored runs (their ids are what "
                             "`tflaunch report` takes)")
    actions = history.add_subparsers(dest="action", required=True)
    listed = actions.add_parser("list", help="the stored runs, newest first, with their ids")
    _add_filters(listed, LIST_LIMIT)
    show = actions.add_parser("show", help="one run in full: phases, settings, environment, why it failed, stderr")
    show.add_argument("id", type=whole, help="the run's id (`tflaunch history list` shows them)")
    show.add_argument("--stderr-lines", type=whole, default=20, metavar="N",
                      help="how many of the last stderr lines to print (default 20)")
    show.add_argument("--json", action="store_true", help="print the whole run as JSON on stdout")
    delete = actions.add_parser("delete", help="delete runs by id, or all runs matching filters")
    delete.add_argument("ids", type=whole, nargs="*", metavar="ID", help="the runs to delete")
    _add_filters(delete, None)
    delete.add_argument("--yes", action="store_true", help="delete without asking")
    export = actions.add_parser("export", help="write runs as JSON or CSV (seconds and bytes as numbers), or as a "
                                "Chrome trace that Perfetto opens (one process track per run)")
    export.add_argument("ids", type=whole, nargs="*", metavar="ID", help="the runs to export (default: all matching)")
    _add_filters(export, None)
    export.add_argument("-o", "--output", metavar="FILE", help="file to write (default: stdout)")
    export.add_argument("--format", choices=exports.names(exports.RUNS),
                        help="default: from the file's name (runs.csv, runs.trace.json), else json; a name "
                             "ending .gz is written gzipped")


# -- the command -------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    actions = {"list": _list, "show": _show, "delete": _delete, "export": _export}
    history = None
    try:
        _check_dates(args)
        # Reading must not create the history: none yet is an empty one.
        history = History(history_path()) if history_path().exists() else None
        if history is not None and history.read_only is not None and history.read_only.kind == "full":
            # Read as it is; said once, since a run left "running" stays so until there is room.
            print(f"tflaunch: {history.read_only.what}. {history.read_only.advice}", file=sys.stderr)
        return actions[args.action](args, history)
    except HistoryError as exc:
        return _refuse(args, CommandError(f"history_{exc.kind.replace(' ', '_')}", _sentence(str(exc))))
    except CommandError as refusal:
        return _refuse(args, refusal)
    finally:
        if history is not None:
            history.close()


def _refuse(args: argparse.Namespace, refusal: CommandError) -> int:
    if getattr(args, "json", False):
        print(json.dumps(failure_json(refusal.kind, refusal.message), indent=2))
    print(f"tflaunch: {refusal.message}", file=sys.stderr)
    return refusal.code


def _sentence(message: str) -> str:
    """A HistoryError's message after "tflaunch: ", which continues lower-case."""
    return message[:1].lower() + message[1:]


def _find(history: History | None, args: argparse.Namespace, ids: Sequence[int] | None = None,
          limit: int | None = None) -> list[RunSummary]:
    if history is None:
        return []
    return history.find_runs(ids=ids, model_contains=args.model, statuses=args.status or (), since=args.since,
                             until=args.until, limit=args.limit if limit is None else limit)


def _check_dates(args: argparse.Namespace) -> None:
    since, until = getattr(args, "since", None), getattr(args, "until", None)
    if since is not None and until is not None and since >= until:
        raise CommandError("invalid_arguments", f"--since ({local_time(since)}) is not before --until "
                           f"({local_time(until)}): no run can match; swap them.", 2)


def _no_such(ids: Sequence[int]) -> CommandError:
    which = f"run {ids[0]}" if len(ids) == 1 else "runs " + ", ".join(map(str, ids))
    return CommandError("no_such_run", f"no {which} in {history_path()}; `tflaunch history list` shows the ids.")


def _check_found(ids: Sequence[int], found: Sequence[RunSummary]) -> None:
    gone = sorted(set(ids) - {run.id for run in found})
    if gone:
        raise _no_such(gone)


# -- list --------------------------------------------------------------------------------------
def _status_text(run: RunSummary) -> str:
    if run.status == DAMAGED:
        return "DAMAGED"
    text = run.status if not run.failed_phase or run.status == "ok" else f"{run.status} ({run.failed_phase})"
    marks = [mark for mark, shown in (("assumed input shape", run.assumed_inputs),
                                      ("outputs not finite", run.outputs_not_finite)) if shown]
    return f"{text} ({', '.join(marks)})" if marks else text


def _when(run: RunSummary) -> str:
    if run.status == DAMAGED and not run.launched_at:
        return "–"  # its own time is what could not be read
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(run.launched_at))


def runs_table(runs: Sequence[RunSummary]) -> str:
    """The runs as the terminal shows them: text left-aligned, figures right-aligned."""
    header = ["ID", "When", "Model", "Settings", "Ready", "Peak memory", "Status"]
    rows = [[str(r.id), _when(r), shown(r.model, 120),  # stored text can hold anything: escapes shown
             shown(r.settings_summary or "–"), format_duration(r.time_to_ready), format_bytes(r.peak_rss),
             _status_text(r)]
            for r in runs]
    right = {0, 4, 5}
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def _damage_notes(runs: Sequence[RunSummary]) -> list[str]:
    return [f"Run {r.id} cannot be read: {r.damage}. Delete it with `tflaunch history delete {r.id}`; the other "
            "runs are not affected." for r in runs if r.status == DAMAGED]


def _list(args: argparse.Namespace, history: History | None) -> int:
    runs = _find(history, args, limit=args.limit + 1)  # one more says whether there are more
    more, runs = len(runs) > args.limit, runs[:args.limit]
    if args.json:
        print(json.dumps({"history": str(history_path()), "runs": [summary_dict(r) for r in runs], "more": more},
                         indent=2))
        return 0
    if history is None:
        print(f"No runs yet: there is no history at {history_path()}. A run creates it: "
              "tflaunch bench --model sample:mlp (or the app).")
        return 0
    filtered = any(getattr(args, name) is not None for name in ("model", "status", "since", "until"))
    if not runs:
        print(f"No runs in {history_path()}" + (" match these filters." if filtered else " yet."))
        return 0
    print(runs_table(runs))
    print()
    for note in _damage_notes(runs):
        print(note)
    footer = f"The newest {_runs(len(runs))} in {history_path()}; more match (--limit N shows more)." if more \
        else f"{_runs(len(runs))} in {history_path()}, newest first."
    print(f"{footer} `tflaunch history show ID` shows one in full; `tflaunch report ID -o run.png` makes its "
          "review image.")
    return 0


# -- show --------------------------------------------------------------------------------------
def _load(history: History | None, run_id: int) -> RunRecord:
    if history is None:
        raise _no_such([run_id])
    try:
        return history.load(run_id)
    except KeyError:
        raise _no_such([run_id]) from None
    except HistoryError as exc:
        if exc.kind != "damaged run":
            raise
        raise CommandError("damaged_run", f"{exc.what}; it cannot be shown, the other runs are not affected. "
                           f"Delete it with `tflaunch history delete {run_id}`.") from None


def show_text(record: RunRecord, run_id: int, stderr_lines: int = 20) -> str:
    """One run in full: the phase table `tflaunch bench` prints, then what else is stored."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.launched_at))
    lines = [f"Run {run_id}, launched {when}: {record.headline}", ""]
    lines.append(run_table(record))
    lines += ["", f"Interpreter: {record.config.python}"]
    if record.settings:
        lines.append("Read back in the child: " + ", ".join(f"{k}={v}" for k, v in record.settings.described.items()))
    for key, value in record.environment.described.items():  # all the child said, keys nobody reads too
        if key != "gpus" and value not in (None, ""):
            lines.append(f"  {key}: {value}")
    if record.imports is not None:
        lines += ["", import_table(record.imports, record.config.python)]
    exit_text = (f"killed by signal {record.exit_signal}" if record.exit_signal
                 else "–" if record.exit_code is None else f"code {record.exit_code}")
    lines.append(f"Exit: {exit_text}")
    # A failed run keeps all it wrote; --stderr-lines N shows as much of it as asked.
    tail = record.whole_output() if len(record.output) > len(record.stderr_tail) else list(record.stderr_tail)
    if record.failure is not None:
        lines += [f"Why it failed ({record.failure.kind}, in {record.failed_phase or 'spawn'}): "
                  f"{record.failure.message}"]
        if record.failure.detail not in "\n".join(tail):  # often the end of stderr, printed below
            lines += [f"  | {line}" for line in record.failure.detail.splitlines()]
    if tail and stderr_lines > 0:
        shown = tail[-stderr_lines:]
        more = f" (--stderr-lines {len(tail)} shows all)" if len(shown) < len(tail) else ""
        lines += ["", f"Last {len(shown)} of {len(tail)} stored stderr lines{more}:", *(f"  | {s}" for s in shown)]
    # A stored stderr tail, failure or path is a child's text: its escapes and bidi controls shown, not obeyed.
    return shown_lines("\n".join(lines), 10_000_000)


def _show(args: argparse.Namespace, history: History | None) -> int:
    record = _load(history, args.id)
    if args.json:
        print(json.dumps({"id": args.id, "history": str(history_path()), **record.to_dict()}, indent=2))
    else:
        print(show_text(record, args.id, args.stderr_lines))
    return 0


# -- delete ------------------------------------------------------------------------------------
FILTERS = ("model", "status", "since", "until", "limit")


def _runs(count: int) -> str:
    return f"{count} run{'s' if count != 1 else ''}"


def _selected(history: History | None, args: argparse.Namespace, action: str) -> list[RunSummary]:
    """The runs named by id, or matching the filters; every id must exist."""
    if not args.ids:
        return _find(history, args)
    if any(getattr(args, name) is not None for name in FILTERS):
        raise CommandError("invalid_arguments", f"{action} takes run ids or filters, not both: drop the ids, or "
                           "the filters.", 2)
    runs = _find(history, args, ids=args.ids)
    _check_found(args.ids, runs)
    return runs


def _delete(args: argparse.Namespace, history: History | None) -> int:
    if not args.ids and all(getattr(args, name) is None for name in FILTERS):
        raise CommandError("invalid_arguments", "delete needs the runs to delete: ids (tflaunch history delete 12 "
                           "15) or filters (--status failed, --until 2026-11-01, --model NAME).", 2)
    runs = _selected(history, args, "delete")
    # A run still being measured is left to the tflaunch that writes it (it has been
    # checked alive on opening: a dead writer's run is "interrupted" by now).
    running = [r for r in runs if r.status == RunStatus.RUNNING.value]
    if running and args.ids:
        raise CommandError("run_in_progress", f"run {running[0].id} is still running (a tflaunch is measuring "
                           "it); delete it once it has ended. Nothing was deleted.")
    runs = [r for r in runs if r.status != RunStatus.RUNNING.value]
    left = f" {_runs(len(running))} still running left alone." if running else ""
    if history is None or not runs:
        return _deleted(args, [], f"No runs match in {history_path()}; nothing deleted.{left}")
    if not args.yes:
        _confirm(runs, args)
    try:
        gone = history.delete([r.id for r in runs])
    except HistoryError as exc:
        raise CommandError(f"history_{exc.kind.replace(' ', '_')}", f"{exc.what}; nothing was deleted."
                           + (f" {exc.advice}" if exc.advice else "")) from None
    ids = ", ".join(str(r.id) for r in runs)
    if gone < len(runs):  # deleted meanwhile (another tflaunch, the app): what this command did is said
        return _deleted(args, [], f"Nothing deleted: {_runs(len(runs) - gone)} of {ids} had been deleted from "
                                  f"{history_path()} meanwhile; `tflaunch history list` shows what is there.{left}") \
            if gone == 0 else _deleted(args, [r.id for r in runs], f"Deleted {gone} of {_runs(len(runs))} ({ids}) "
                                       f"from {history_path()}; the others had been deleted meanwhile.{left}")
    return _deleted(args, [r.id for r in runs], f"Deleted {_runs(len(runs))} ({ids}) from {history_path()}.{left}")


def _confirm(runs: Sequence[RunSummary], args: argparse.Namespace) -> None:
    """Ask on a terminal; elsewhere (a script, a pipe, --json) refuse: --yes says it was meant."""
    if args.json or not sys.stdin.isatty():
        raise CommandError("not_confirmed", f"nothing deleted: deleting {_runs(len(runs))} needs confirmation; "
                           "run it in a terminal to be asked, or add --yes.")
    print(runs_table(runs))
    these = "this run" if len(runs) == 1 else f"these {len(runs)} runs"
    answer = input(f"Delete {these} from {history_path()}? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise CommandError("not_confirmed", "nothing deleted.")


def _deleted(args: argparse.Namespace, ids: list[int], message: str) -> int:
    if args.json:
        print(json.dumps({"history": str(history_path()), "deleted": ids}, indent=2))
    print(message, file=sys.stderr if args.json else sys.stdout)
    return 0 if ids else 1  # a script must not take "nothing deleted" for done


# -- export ------------------------------------------------------------------------------------
def _export(args: argparse.Namespace, history: History | None) -> int:
    named = "json" if args.json else args.format
    guessed = exports.guess(exports.RUNS, args.output) if args.output and args.output != "-" else None
    fmt = exports.find(exports.RUNS, named) if named else guessed or exports.find(exports.RUNS, "json")
    runs = []
    for summary in _selected(history, args, "export"):
        record, damage = None, summary.damage
        if summary.status != DAMAGED and history is not None:  # (always one: the summary came from it)
            try:
                record = history.load(summary.id)
            except KeyError:
                continue  # deleted meanwhile
            except HistoryError as exc:
                if exc.kind != "damaged run":
                    raise
                damage = exc.what
        runs.append(ExportedRun(summary, record, damage))
    assert fmt.write_runs is not None
    text = fmt.write_runs(runs, str(history_path()))
    for run in runs:
        if run.record is None:
            what = "exported as damaged" if fmt.damaged_rows else f"left out of the {fmt.name}"
            print(f"tflaunch: run {run.summary.id} cannot be read and is {what} ({run.damage}).", file=sys.stderr)
    if not args.output or args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        atomic_write(Path(args.output), exports.encoded(text, args.output))
    except OSError as exc:
        raise CommandError("cannot_write", f"cannot write {args.output} ({exc.strerror or exc}); choose another "
                           "file with -o, or - for stdout.") from None
    print(f"tflaunch: wrote {_runs(len(runs))} as {fmt.name.upper()} to {args.output}", file=sys.stderr)
    return 0

