"""A program's own clock, as it wrote it: `TRUTH KEY=<time.time()>` lines on its stderr, which
the stack programs (tests/stacks/programs) write where tflaunch also reports a point."""

from __future__ import annotations

import re

from tflaunch.core.run.record import RunRecord


def truth(record: RunRecord, key: str) -> float:
    """When the program says KEY happened, by its own wall clock."""
    for line in record.stderr_tail:
        found = re.search(rf"TRUTH {key}=([0-9.]+)", line)
        if found:
            return float(found.group(1))
    raise AssertionError(f"the program never said {key}: {list(record.stderr_tail)[-5:]}")
