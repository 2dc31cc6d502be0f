"""`tflaunch gui` where Qt cannot open a window: tflaunch says why and what to do, before
Qt's own abort, and exits non-zero."""

from __future__ import annotations

import os
import subprocess
import sys

from tflaunch.gui.qt_platform import can_load, platform_problem, would_use_xcb

X11 = {"DISPLAY": ":0"}


def _all_but(*absent: str):
    return lambda library: library not in absent


def test_a_missing_xcb_library_is_named_with_its_package_and_the_ways_round_it():
    problem = platform_problem(X11, _all_but("libxcb-cursor.so.0"), "linux")
    assert "needs libxcb-cursor.so.0, which this system lacks" in problem
    assert "sudo apt-get install libxcb-cursor0." in problem
    assert "QT_QPA_PLATFORM=wayland" in problem and "QT_QPA_PLATFORM=offscreen" in problem
    both = platform_problem(X11, _all_but("libxcb-icccm.so.4", "libxcb-keysyms.so.1"), "linux")
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1." in both and "Install them" in both
    assert platform_problem(X11, _all_but(), "linux") == ""


def test_only_the_x11_platform_is_checked():
    missing = _all_but("libxcb-cursor.so.0")
    assert would_use_xcb({"DISPLAY": ":0"}) and would_use_xcb({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"})
    assert not would_use_xcb({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"})
    for environ in ({"QT_QPA_PLATFORM": "offscreen"}, {"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"},
                    {"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}):
        assert platform_problem(environ, missing, "linux") == "", environ
    assert platform_problem(X11, missing, "darwin") == ""
    assert "there is no display" in platform_problem({}, missing, "linux")


def test_the_real_loader_answers():
    assert can_load("libc.so.6") and not can_load("libtflaunch-not-there.so.9")


def test_tflaunch_gui_says_its_reason_before_qt_and_exits_nonzero():
    # A real `tflaunch gui`, with only the library search faked: the cursor library is missing.
    code = ("import sys, tflaunch.gui.qt_platform as q; q.can_load = lambda lib: lib != 'libxcb-cursor.so.0'; "
            "from tflaunch.gui.main import main; sys.exit(main(['gui']))")
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    done = subprocess.run([sys.executable, "-c", code], env={**env, "DISPLAY": ":99"}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("tflaunch: the window cannot open: Qt's X11 platform plugin (xcb) needs "
                           "libxcb-cursor.so.0") and "sudo apt-get install libxcb-cursor0" in last
    assert "qt.qpa" not in done.stderr and "Aborted" not in done.stderr
