"""No module outside core/phases.py and the observer decides by a phase's name written out
(issue 35): `name == "steady"`, `"first_step" in record.phases`, `record.phase("import")`.
What tflaunch does with a phase is said once, in core/phases.py, by its constants and
functions; a literal elsewhere is a second rule that drifts from it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tflaunch.core import phases

ROOT = Path(__file__).resolve().parents[1]
NAMES = {*phases.PHASES, *phases.PROGRAM_PHASES, phases.OTHER}

# Whole folders that must spell the names themselves.
ALLOWED_FOLDERS = {
    "core/probe": "the probe and the observer run in the child, where tflaunch is not installed",
    "core/settings/launch_hook": "the launch hook and tflaunch_mark run inside the user's program, as the probe",
}
# (file, literal): the same word meaning something else than the phase.
ALLOWED = {
    ("core/phases.py", name): "the registry itself" for name in NAMES
} | {
    ("core/cli/main.py", "devices"): "the `tflaunch devices` command",
    ("core/cli/profiles.py", "import"): "the `tflaunch profile import` action",
    ("core/settings/display.py", "steady"): "the steady setting (how many steady calls), not the phase",
    ("gui/settings/settings_panel.py", "steady"): "the steady setting's editor",
}


def _literals(node: ast.AST) -> Iterator[ast.Constant]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES:
        yield node
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for element in node.elts:
            yield from _literals(element)


def deciding_literals(tree: ast.AST) -> Iterator[ast.Constant]:
    """Phase names compared with (==, in), looked up (record.phase, .get, .pop) or indexed by."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for part in (node.left, *node.comparators):
                yield from _literals(part)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("phase", "get", "pop") and node.args:
            yield from _literals(node.args[0])
        elif isinstance(node, ast.Subscript):
            yield from _literals(node.slice)


def test_no_module_decides_by_a_phase_name_written_out():
    found = []
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("gui/**/*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        if any(relative.startswith(folder + "/") for folder in ALLOWED_FOLDERS):
            continue
        for literal in deciding_literals(ast.parse(path.read_text(encoding="utf-8"))):
            if (relative, literal.value) not in ALLOWED:
                found.append(f"{relative}:{literal.lineno}: {literal.value!r}")
    assert not found, "decide by core/phases.py's constants and functions, not a name written out: " + \
        "; ".join(found)


def test_the_grep_sees_what_it_forbids():
    tree = ast.parse('if name == "steady" or "first_step" in names or record.phase("import") or p["spawn"]: pass')
    assert sorted(c.value for c in deciding_literals(tree)) == ["first_step", "import", "spawn", "steady"]
