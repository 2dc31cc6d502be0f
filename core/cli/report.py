"""`tflaunch report`: a review of a run, a comparison, a sweep or a profile, as a file.

Markdown and CSV are written here; PNG and SVG need Qt, so the GUI package hands in a
renderer (core never imports Qt) that draws them offscreen, without a display.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ..cluster.folder import FolderError, load
from ..cluster.merge import node_type_sweeps, stored_facts
from ..cluster.review import folder_review
from ..cluster.status import trial_states
from ..paths import profiles_dir
from ..report import exports
from ..report.review import Review, comparison_review, profile_review, run_review, sweep_review
from ..store.history import HistoryError, default_history
from ..store.profiles import ProfileError, ProfileStore
from ..sweep.plan import PlanError
from ..sweep.stored import restore_sweep
from .numbers import whole

Renderer = Callable[[Review, Path, str, int], None]


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    report = sub.add_parser(
        "report", help="write a review image (or Markdown, CSV) of a run, comparison, sweep or profile")
    report.add_argument("target", help="a run id (12), runs to compare (12,15,17), a sweep (sweep:3), a cluster "
                                       "sweep's folder (cluster:DIR, one verdict per node type) or a profile name")
    report.add_argument("-o", "--output", required=True, help="file to write")
    report.add_argument("--format", choices=exports.names(exports.REVIEW), help="default: from the file's extension")
    report.add_argument("--scale", type=whole, choices=(1, 2), default=1, help="2 for a high-DPI PNG (3200×1800)")
    report.add_argument("--baseline", type=whole, default=0, help="with several runs: the index of the baseline")


def build(target: str, baseline: int = 0) -> Review:
    """The review a target names; KeyError or ValueError with a message when it cannot."""
    if target.startswith("cluster:"):
        return _cluster(Path(target[len("cluster:"):]))
    if target.startswith("sweep:"):
        history = default_history()
        sweep_id = int(target[len("sweep:"):])
        sweep, example = restore_sweep(history, sweep_id)
        trials = history.sweep_trials(sweep_id)
        # Every trial's run: the review's dates and environments are the sweep's own.
        review = sweep_review(sweep, [record for _, record in trials] or example, sweep_id)
        cluster = history.sweep_plan(sweep_id).get("cluster")
        if isinstance(cluster, dict):  # merged from a cluster: where it ran stays said
            review.facts.extend(stored_facts(cluster, trials))
        return review
    ids = target.split(",")
    if all(part.strip().isdigit() for part in ids):
        history = default_history()
        records = [history.load(int(part)) for part in ids]
        return run_review(records[0]) if len(records) == 1 else comparison_review(records, baseline)
    profile = ProfileStore(profiles_dir()).load(target)
    return profile_review(profile.name, profile.evidence, profile.config)


def _cluster(path: Path) -> Review:
    """A cluster sweep's review from its folder's results (merged or not), without Slurm."""
    folder = load(path.resolve())
    states = trial_states(folder, ask_slurm=False)
    return folder_review(folder, states, node_type_sweeps(folder, states))


def run(args: argparse.Namespace, renderer: Renderer | None) -> int:
    typed = Path(args.output).suffix.lstrip(".").lower()
    found = exports.find(exports.REVIEW, args.format) if args.format else exports.guess(exports.REVIEW, args.output)
    if found is None and typed:
        choices = ", ".join(exports.names(exports.REVIEW))
        print(f"tflaunch: cannot write '{typed}' ({args.output}): use --format {choices}.", file=sys.stderr)
        return 2
    fmt = found or exports.find(exports.REVIEW, "png")
    try:
        review = build(args.target, args.baseline)
    except (HistoryError, ProfileError, PlanError, FolderError) as exc:
        print(f"tflaunch: {exc}", file=sys.stderr)
        return 1
    except (KeyError, ValueError) as exc:
        print(f"tflaunch: nothing to report for {args.target!r}: no such run or sweep ({exc}).", file=sys.stderr)
        return 1
    path = Path(args.output)
    if fmt.write_review is not None:
        path.write_bytes(exports.encoded(fmt.write_review(review), path))
    elif renderer is None:
        print("tflaunch: PNG and SVG reviews need PySide6; write --format md or csv here.", file=sys.stderr)
        return 2
    else:
        renderer(review, path, fmt.name, args.scale)
    print(str(path))
    return 0
