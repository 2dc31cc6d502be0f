"""Tests that need TensorFlow in their own process run in a forked child.

A test worker stands in for the app's process, which never imports TensorFlow, and a GUI
test in the same worker asserts it is absent (tests/gui/test_run_in_window.py). A test
that must call TensorFlow itself (to parse what tflaunch wrote with TF Serving's own
classes) runs its body in a child forked from the worker: the child imports TensorFlow,
reports its failure (the traceback) through a pipe, and exits; the worker stays clean.
"""

from __future__ import annotations

import functools
import importlib
import os
import traceback
from collections.abc import Callable
from typing import Any

import pytest


def with_tensorflow(test: Callable[..., None]) -> Callable[..., None]:
    """Run `test` in a forked child whose `tf` argument is the real TensorFlow module."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            os.close(read)
            failure = b""
            try:
                if "tf" in kwargs:
                    kwargs["tf"] = importlib.import_module("tensorflow")
                test(*args, **kwargs)
            except BaseException:  # noqa: BLE001 (everything is reported to the parent)
                failure = traceback.format_exc().encode(errors="replace") or b"failed"
            with os.fdopen(write, "wb") as out:
                out.write(failure)
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as answer:
            failure = answer.read()
        _, status = os.waitpid(pid, 0)
        if failure:
            pytest.fail(f"in the forked child:\n{failure.decode(errors='replace')}", pytrace=False)
        if status != 0:
            pytest.fail(f"the forked child ended with wait status {status}", pytrace=False)

    return run
