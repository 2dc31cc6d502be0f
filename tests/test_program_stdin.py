"""A program that asks for input gets none under tflaunch (stdin is /dev/null): the failure
names the EOFError it died of, not the prompt it left on stdout, and says why."""

from __future__ import annotations

from pathlib import Path

from tflaunch.core.run.program_outcome import last_error_line
from tflaunch.core.run.record import RunStatus

from .test_program_subject import measure


def test_a_prompt_left_on_stdout_does_not_hide_the_traceback_it_runs_into() -> None:
    tail = ["How many epochs? Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
            "    epochs = int(input('How many epochs? '))", "EOFError: EOF when reading a line"]
    assert last_error_line(tail) == "EOFError: EOF when reading a line"


def test_a_program_reading_stdin_is_told_that_tflaunch_gives_it_none(tmp_path: Path) -> None:
    script = tmp_path / "ask.py"
    script.write_text("epochs = int(input('How many epochs? '))\nprint(epochs)\n")
    record = measure(str(script), until="exit", workdir=tmp_path, timeout=60)
    assert record.status is RunStatus.FAILED
    assert record.failure is not None
    message = record.failure.message
    assert "Its last error: EOFError: EOF when reading a line" in message, message
    assert "no standard input" in message and "How many epochs" not in message.split("Its last error")[1]
