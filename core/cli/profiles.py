"""`tflaunch profiles ...` and `tflaunch run --profile`: launch profiles from a terminal."""

from __future__ import annotations

import argparse
import sys

from ..paths import profiles_dir
from ..run.environment import stack_for
from ..run.launch_check import launch_check
from ..run.script import run_warm_with_profile, run_with_profile
from ..run.warm.warm_start import DEFAULT_IDLE_S
from ..safe_text import shown, shown_lines
from ..settings.display import setting_text
from ..store.model_code import model_details
from ..store.profile_subject import measured_on
from ..store.profiles import Profile, ProfileError, ProfileStore, diff, evidence_weakness
from ..store.trust import code_it_runs
from ..units import format_duration
from .arguments import print_problems
from .numbers import decimal


def add_arguments(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = sub.add_parser("run", help="start any command with a launch profile applied",
                         usage="tflaunch run --profile NAME [--warm] -- COMMAND [ARG ...]")
    run.add_argument("--profile", required=True, help="name of a saved launch profile")
    run.add_argument("--warm", action="store_true",
                     help="start `python SCRIPT` in a process forked from a warm server that has already imported "
                          "TensorFlow (started on demand, one per interpreter and environment); cold, saying why, "
                          "when that is not possible")
    run.add_argument("--warm-idle", type=decimal, default=DEFAULT_IDLE_S, metavar="SECONDS",
                     help=f"how long a warm server waits for another launch before it ends ({DEFAULT_IDLE_S:g} s)")
    run.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND", help="the command, after --")
    profiles = sub.add_parser("profiles", help="list, show, export, import, rename, delete or diff profiles")
    actions = profiles.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="all profiles, broken ones with the reason")
    for name, text in (("show", "print a profile"), ("delete", "delete a profile")):
        actions.add_parser(name, help=text).add_argument("name")
    export = actions.add_parser("export", help="write a profile to a file")
    export.add_argument("name")
    export.add_argument("file")
    imported = actions.add_parser("import", help="add a profile from a file")
    imported.add_argument("file")
    imported.add_argument("--name", help="name to give it (default: the file's name)")
    imported.add_argument("--force", action="store_true", help="replace a profile of that name")
    trust = actions.add_parser("trust", help="accept what a profile would run (environment variables that load "
                               "code, an interpreter, imports); shows it first")
    trust.add_argument("name")
    trust.add_argument("--yes", action="store_true", help="accept without asking (you have read the list)")
    trust.add_argument("--revoke", action="store_true", help="take the acceptance back")
    for name, first, second in (("rename", "name", "new_name"), ("diff", "a", "b")):
        parser = actions.add_parser(name, help=f"{name} profiles")
        parser.add_argument(first)
        parser.add_argument(second)


def run_command(args: argparse.Namespace) -> int:
    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not command:
        print("tflaunch: run needs a command after --, e.g. tflaunch run --profile fast -- python train.py",
              file=sys.stderr)
        return 2
    try:
        profile = ProfileStore(profiles_dir()).load_for_launch(args.profile)
        problems = launch_check(profile.config, script=True)
        if problems:
            print(f"tflaunch: the profile {args.profile} cannot be applied:", file=sys.stderr)
            print_problems(problems)
            return 2
        if note := pack_note(profile):
            print(f"tflaunch: {note}", file=sys.stderr)
        if args.warm:
            return run_warm_with_profile(profile.config, command, args.warm_idle)
        return run_with_profile(profile.config, command)
    except (ProfileError, OSError) as exc:
        print(f"tflaunch: {shown_lines(str(exc))}", file=sys.stderr)
        return 2


def pack_note(profile: Profile) -> str | None:
    """When the profile was measured with another cache pack than this stack's: which, and
    that this launch fills its own (a pack never crosses its key)."""
    caches = profile.evidence.get("caches")
    measured = caches.get("cache_pack") if isinstance(caches, dict) else None
    if not profile.config.xla_cache or not isinstance(measured, str):
        return None
    stack = stack_for(profile.config)
    if stack is None or stack.key == measured:
        return None
    return (f"the profile {profile.name} was measured with the cache pack {measured}; this stack's is {stack.key} "
            "(another TensorFlow, build, driver, GPU or XLA flag set): its runs fill and read their own, never "
            "the other key's. `tflaunch cache import` brings a pack exported from a machine of this stack.")


def profiles_command(args: argparse.Namespace) -> int:
    store = ProfileStore(profiles_dir())
    try:
        if args.action == "list":
            return _list(store)
        if args.action == "show":
            profile = store.load(args.name)
            # The file's text, its C1 controls and bidi overrides shown as escapes (TOML keeps them raw).
            print(shown_lines(profile.to_toml()), end="")  # stdout stays the file; the warning is for the reader
            weakness = evidence_weakness(profile.evidence)
            if weakness:
                print(f"tflaunch: the profile {args.name} rests on weak evidence: {weakness}", file=sys.stderr)
        elif args.action == "delete":
            store.delete(args.name)
        elif args.action == "export":
            store.export(args.name, args.file)
        elif args.action == "import":
            imported = store.import_file(args.file, args.name, overwrite=args.force)
            print(imported.name)
            code = code_it_runs(imported.config)
            if code:  # said now, not at the first launch: shown() like every line before a yes
                print(f"tflaunch: {imported.name} would run code; it runs only after `tflaunch profiles trust "
                      f"{imported.name}`:\n" + "\n".join(f"  - {line}" for line in code), file=sys.stderr)
        elif args.action == "trust":
            return _trust(store, args)
        elif args.action == "rename":
            store.rename(args.name, args.new_name)
        elif args.action == "diff":
            for key, a, b in diff(store.load(args.a), store.load(args.b)):
                print(shown(f"{key}: {_diff_value(key, a)} -> {_diff_value(key, b)}", 2000))
    except (ProfileError, OSError) as exc:
        print(f"tflaunch: {shown_lines(str(exc))}", file=sys.stderr)
        return 1
    return 0


def _diff_value(key: str, value: object) -> str:
    """A setting in words (on/off, "default (TensorFlow decides)"); evidence as it is stored."""
    if value is None:
        return "(not set)"
    if key.startswith("settings."):
        return setting_text(key.split(".", 1)[1], value)
    return str(value)


def _list(store: ProfileStore) -> int:
    entries = store.entries()
    if not entries:
        print(f"No profiles yet in {store.folder}. Save one with: tflaunch bench --model M --save-profile NAME")
    for entry in entries:
        if entry.profile is None:
            print(f"{shown(entry.name)}  BROKEN: {shown(entry.problem, 1000)}")
            continue
        ready = (entry.profile.evidence.get("time_to_ready") or {}).get("median")
        runs = entry.profile.evidence.get("runs", 0)
        weak = "; weak evidence" if evidence_weakness(entry.profile.evidence) else ""
        untrusted = "  NOT ACCEPTED: runs code, see `tflaunch profiles trust " + entry.name + "`" \
            if store.unaccepted_code(entry.profile) else ""
        print(f"{shown(entry.name)}  {shown(measured_on(entry.profile))}  {shown(entry.profile.config.summary())}  "
              f"ready {format_duration(ready)} (median of {runs} run{'' if runs == 1 else 's'}{weak}){untrusted}")
    return 1 if any(e.profile is None for e in entries) else 0


def _trust(store: ProfileStore, args: argparse.Namespace) -> int:
    """Show what the profile runs, then record the user's acceptance of exactly this file."""
    if args.revoke:
        store.revoke(args.name)
        print(f"tflaunch: {args.name} is no longer accepted; it runs only after `profiles trust` again.",
              file=sys.stderr)
        return 0
    profile = store.load(args.name)
    code = code_it_runs(profile.config)
    if not code:
        print(f"tflaunch: {args.name} runs no code besides your command and model; it needs no trust.",
              file=sys.stderr)
        return 0
    print(f"The profile {args.name} ({shown(store.path(args.name))}, sha256 {profile.digest[:16]}…) would:")
    for line in code:
        print(f"  - {line}")
    for line in model_details(profile.config.model) if not profile.config.is_program else []:
        print(f"      {line}")  # under the model's line: what its graph holds, read without running it
    if not args.yes:
        if not sys.stdin.isatty():
            print("tflaunch: nothing accepted; run it in a terminal to be asked, or add --yes once you have "
                  "read the list above.", file=sys.stderr)
            return 1
        if input("Accept and let tflaunch run this? [y/N] ").strip().lower() not in ("y", "yes"):
            print("tflaunch: nothing accepted.", file=sys.stderr)
            return 1
    store.accept(args.name, profile.digest)
    print(f"tflaunch: accepted {args.name}; if the file changes it needs accepting again.", file=sys.stderr)
    return 0
