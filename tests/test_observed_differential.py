"""Observed against unobserved, program by program: every program in tests/observed_cases/
runs as a plain `python PROG` and as `tflaunch bench --until exit --no-history -- python PROG`
runs it (the CLI's parser, its config and the engine it drives), with the same interpreter,
environment, working folder (a fresh copy each) and stdio (no stdin, two pipes), and both must
be seen to do the same: exit status, stdout, the traceback and a final message on stderr, the
files the program writes (their names, and the bytes of .json/.txt/.npy/.csv).

Watching must not change the program (issue 31): a difference a fix of tflaunch can remove is
marked `bug(what differs)` and the mark goes with the fix (strict: a fixed case fails until its
mark is removed); a difference no fix can remove would be refused with its reason, and the
table has none. Beside the table, one test runs two of the programs under `--until
first_inference`: a symbolic call while a model is built is not its first inference.
tests/observed_cases/README.md says what each program stands for and what it checks. `make
test` runs two programs chosen for coverage and the symbolic-call test; the slow tier runs the
rest (each program is two TensorFlow processes of a few seconds, run side by side)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from .observed_harness import CASES, Case, both, copy_of_cases, differences, observed_record, user_environment

# `make test`: the serving crash (load_model compiling, Keras' own identity check) and a
# program's own identity and introspection checks; the slow tier runs every program.
EVERY_TIER = frozenset({"serve_loaded_model", "method_identity"})


def bug(reason: str, condition: bool = True) -> pytest.MarkDecorator:
    """A difference tflaunch can remove: the mark goes when the fix lands (strict: a fixed case fails here)."""
    return pytest.mark.xfail(condition, strict=True, reason=reason)


def case(name: str, marks: tuple[pytest.MarkDecorator, ...] | pytest.MarkDecorator = (), *, message: bool = False,
         args: tuple[str, ...] = ()) -> Any:
    marks = tuple(marks) if isinstance(marks, tuple) else (marks,)
    if name not in EVERY_TIER:
        marks = (*marks, pytest.mark.slow)
    return pytest.param(Case(name, (f"{name}.py", *args), message=message), id=name, marks=marks)


TABLE = [
    # saved, loaded, restored
    case("serve_loaded_model"),
    case("load_then_fit"),
    case("compile_from_config"),
    case("checkpoint_restore_fit"),
    case("custom_compile"),
    case("h5_weights"),
    case("json_from_config"),
    case("savedmodel_signature"),
    case("pickle_model"),
    # models of their own
    case("custom_train_step"),
    case("subclassed_model"),
    case("call_override"),
    case("gan_two_optimizers"),
    case("multiple_models"),
    case("built_twice"),
    case("gradient_tape_loop"),
    # built from symbolic calls
    case("nested_ffn_block"),
    case("augmentation_on_input"),
    # strategies and policies
    case("mirrored_one_cpu"),
    case("mirrored_two_cpus"),
    case("mixed_precision"),
    # what a program reads off Keras and TensorFlow
    case("callback_inspects_model"),
    case("method_identity"),
    case("method_attributes"),
    case("function_input_signature"),
    case("model_summary"),
    case("early_stopping_best"),
    # data
    case("tfdata_py_function"),
    case("workers_spawn"),
    case("workers_fork"),
    case("threaded_function"),
    # the process: stdin, warnings, errors, exits
    case("prompt_stdin"),
    case("warnings_filters"),
    case("raises", bug(
        "one frame more in the traceback of an error raised through a hooked method: the hook's, dressed as the "
        "library's own (keras/src/utils/traceback_utils.py, in error_handler), which Keras' filter cannot drop since "
        "it is above Keras' own; a Python wrapper's frame stays in a traceback. On 3.12+ sys.monitoring needs no "
        "wrapper (hook_tools.hook), and the case holds (tests/stacks: test_the_hooks_are_not_seen_on_python_3_12)",
        sys.version_info < (3, 12))),
    case("exit_code"),
    case("exit_message", message=True),
    case("atexit_handlers"),
]


def test_the_table_has_every_program() -> None:
    programs = {p.stem for p in CASES.glob("*.py") if not p.name.startswith("_")}
    assert programs == {p.values[0].name for p in TABLE}
    readme = (CASES / "README.md").read_text()
    assert all(f"`{name}.py`" in readme for name in programs), "a program the README does not describe"


@pytest.mark.parametrize("c", TABLE)
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_observed_is_seen_as_unobserved(c: Case, tmp_path: Path) -> None:
    unobserved, observed = both(c, tmp_path, user_environment())
    assert not isinstance(unobserved.status, str), f"the program itself {unobserved.status}: {unobserved}"
    assert observed == unobserved, differences(unobserved, observed)


@pytest.mark.parametrize("name", ["nested_ffn_block", pytest.param("augmentation_on_input", marks=pytest.mark.slow)])
@pytest.mark.slow  # real child processes; make test keeps to its 6 minutes, CI runs this tier too
def test_a_symbolic_call_while_a_model_is_built_is_not_its_first_inference(name: str, tmp_path: Path) -> None:
    """`bench --until first_inference` of a program that builds a functional model from nested
    Sequentials (symbolic calls), compiles, fits, then predicts: its first inference is the predict,
    so it begins after compile began (issue 31: only real, eager calls are inference)."""
    record, session = observed_record(Case(name, (f"{name}.py",)), copy_of_cases(tmp_path / "observed"),
                                      user_environment(), "first_inference")
    first, compile_ = record.phases.get("first"), record.phases.get("compile")
    assert first is not None and first.started is not None, record.headline
    assert compile_ is not None and compile_.started is not None, f"no compile phase: {list(record.phases)}"
    assert first.started >= compile_.started, f"first inference drawn {compile_.started - first.started:.3f} s " \
                                             f"before compile: {list(record.phases)}"
    assert "model built" in session.out.decode()
