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
    ("core/cli/cache.py", "build"): "a cache pack's key: TensorFlow's build, not the phase",
    ("core/settings/pack_archive.py", "build"): "a cache pack's key: TensorFlow's build, not the phase",
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


# -- subjects: "model" and "program" are words of core/subject.py -------------------------------
SUBJECT_WORDS = {"model", "program"}
# What a subject's word may be compared with: a setting's name (the model and program
# settings), or a table of them, never a run's kind of measurement.
SETTING_NAMES = {"name", "field_name", "values"}


def subject_deciding(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, source) of comparisons with "model" or "program" whose other side is not a setting's name."""
    def has_word(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in SUBJECT_WORDS
        return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(has_word(e) for e in node.elts)

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            if any(has_word(p) for p in parts):
                others = [ast.unparse(p) for p in parts if not has_word(p)]
                if not all(other.rsplit(".", 1)[-1] in SETTING_NAMES for other in others):
                    yield node.lineno, ast.unparse(node)


def test_no_module_decides_by_a_subject_word_written_out():
    """Which subject a run measured is asked of its Subject (core/subject.py: is_program, its
    phases, words and the settings it reads): `measurement_kind(r) == "model"` elsewhere was a
    second rule (the settings table and the observer name the subjects themselves)."""
    found = []
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("gui/**/*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        if relative == "core/subject.py" or any(relative.startswith(folder + "/") for folder in ALLOWED_FOLDERS):
            continue
        found += [f"{relative}:{line}: {source}" for line, source in
                  subject_deciding(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, "ask the run's Subject, not a word written out: " + "; ".join(found)


def test_the_subject_grep_sees_what_it_forbids():
    tree = ast.parse('if kind(r) == "model" or kinds == {"program"} or name in ("model", "python"): pass')
    assert [source for _, source in subject_deciding(tree)] == ["kind(r) == 'model'", "kinds == {'program'}"]
