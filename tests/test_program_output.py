"""The program's own output: shown live on a terminal (each line after │, off with --quiet),
kept whole for a failed run in History, and never changed for the program (its stdout and
stderr stay pipes, its environment the same, watched or not)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from tflaunch.core.cli.main import main
from tflaunch.core.paths import history_path
from tflaunch.core.run.record_data import OUTPUT_KEPT_BYTES
from tflaunch.core.store.history import History

from .builders import TFLAUNCH, finished_record

SAYS = """
import json, os, sys
seen = {"stdout_tty": os.isatty(1), "stderr_tty": os.isatty(2), "stdin_tty": os.isatty(0),
        "unbuffered": os.environ.get("PYTHONUNBUFFERED")}
print("SEEN " + json.dumps(seen, sort_keys=True), flush=True)
print("a line on stderr", file=sys.stderr, flush=True)
"""


def bench_on_a_terminal(script, *flags: str) -> tuple[int, str]:
    """`tflaunch bench` with a terminal as its stderr, as a person runs it: (exit code, what the terminal showed)."""
    main_fd, terminal = pty.openpty()
    done = subprocess.run([*TFLAUNCH, "bench", "--until", "exit", *flags, "--", sys.executable, str(script)],
                          stdout=subprocess.PIPE, stderr=terminal, stdin=subprocess.DEVNULL, timeout=120)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # EIO: the terminal's other end is closed and all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(main_fd)
    return done.returncode, shown.decode("utf-8", "replace")


def seen_by_program(shown: str) -> dict:
    line = next(line for line in shown.splitlines() if "SEEN " in line)
    return json.loads(line.split("SEEN ", 1)[1])


def test_a_terminal_shows_the_programs_lines_live_and_the_program_sees_the_same_either_way(tmp_path):
    script = tmp_path / "says.py"
    script.write_text(SAYS)
    code, shown = bench_on_a_terminal(script)
    assert code == 0, shown
    assert "│ a line on stderr" in shown and "│ SEEN " in shown
    watched = seen_by_program(shown)
    assert watched == {"stdout_tty": False, "stderr_tty": False, "stdin_tty": False,
                       "unbuffered": os.environ.get("PYTHONUNBUFFERED")}, "pipes, and our environment as it is"
    code, quiet = bench_on_a_terminal(script, "--quiet", "--json")
    assert code == 0 and "│ " not in quiet and "a line on stderr" not in quiet
    # What it saw unwatched: the stored tail of the quiet run says the same as the watched one.
    history = History(history_path())
    last = history.load(history.list_runs(limit=1)[0].id)
    assert json.loads(next(line for line in last.stderr_tail if line.startswith("SEEN "))[5:]) == watched


def test_not_shown_into_a_pipe_a_script_reads(tmp_path):
    script = tmp_path / "says.py"
    script.write_text(SAYS)
    done = subprocess.run([*TFLAUNCH, "bench", "--until", "exit", "--", sys.executable, str(script)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "│ " not in done.stderr


def test_a_failed_run_keeps_all_it_printed_in_history(tmp_path, capsys):
    script = tmp_path / "noisy.py"
    script.write_text("import sys\nfor i in range(1000):\n    print(f'line {i}')\nsys.exit(3)\n")
    done = subprocess.run([*TFLAUNCH, "bench", "--until", "exit", "--", sys.executable, str(script)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    history = History(history_path())
    run_id = history.list_runs(limit=1)[0].id
    record = history.load(run_id)
    assert record.output == [f"line {i}" for i in range(1000)], "all of it, not the 200-line tail"
    assert list(record.stderr_tail) == [f"line {i}" for i in range(800, 1000)]
    history.close()
    assert main(["history", "show", str(run_id), "--stderr-lines", "1000"]) == 0
    out = capsys.readouterr().out
    assert "Last 1000 of 1000 stored stderr lines" in out and "  | line 0\n" in out


def test_a_run_that_succeeded_keeps_its_tail_and_a_flood_keeps_its_head_and_tail():
    record = finished_record()
    assert record.output == [] and list(record.stderr_tail) == ["I0000 a log line"]
    flood = finished_record()
    flood.status = flood.status.FAILED
    line = "x" * 1000
    count = OUTPUT_KEPT_BYTES // 1000 + 500
    for i in range(count):
        flood.add_stderr(f"{i:06d} {line}")
    whole = flood.whole_output()
    assert whole[0].startswith("000000") and whole[-1].startswith(f"{count - 1:06d}")
    gap = next(line for line in whole if line.startswith("[…"))
    assert "lines left out: a run keeps 8 MiB of its output" in gap
