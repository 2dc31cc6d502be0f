"""Can Qt open a window here? Asked before the QApplication exists, without importing Qt.

Qt's own answer comes too late and in its words: a missing library of its X11 plugin ends
the process with "could not load the Qt platform plugin xcb" (and names libxcb-cursor0
whichever library is missing). tflaunch names the libraries, their packages and the ways
round it instead.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Mapping

# What Qt's X11 plugin (libqxcb.so, Qt 6.5+) loads that minimal and container installs lack:
# the library, and the Debian/Ubuntu package that installs it.
XCB_LIBRARIES = (
    ("libxcb-cursor.so.0", "libxcb-cursor0"),
    ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-image.so.0", "libxcb-image0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
    ("libxcb-randr.so.0", "libxcb-randr0"),
    ("libxcb-shape.so.0", "libxcb-shape0"),
    ("libxcb-xkb.so.1", "libxcb-xkb1"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libX11-xcb.so.1", "libx11-xcb1"),
    ("libEGL.so.1", "libegl1"),
)

Loadable = Callable[[str], bool]


def can_load(library: str) -> bool:
    """Whether the dynamic loader finds `library` (by the search Qt's own loading uses)."""
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def would_use_xcb(environ: Mapping[str, str]) -> bool:
    """Qt would choose its X11 plugin: asked for (QT_QPA_PLATFORM=xcb, first in a list), or
    nothing asked and no Wayland session to prefer."""
    asked = environ.get("QT_QPA_PLATFORM", "").strip()
    if asked:
        return asked.split(";")[0].split(":")[0].strip() == "xcb"
    return not environ.get("WAYLAND_DISPLAY")


def platform_problem(environ: Mapping[str, str], loadable: Loadable | None = None,
                     system: str = sys.platform) -> str:
    """Why the window cannot open here, with what to do; "" when nothing stands in its way
    that tflaunch can see. `loadable` answers whether a library loads (can_load)."""
    if not system.startswith("linux") or not would_use_xcb(environ):
        return ""
    if not environ.get("DISPLAY"):
        return ("the window cannot open: there is no display (DISPLAY and WAYLAND_DISPLAY are unset). Start "
                "tflaunch in a desktop session (or over ssh -X), or measure in the terminal: "
                "tflaunch bench --model sample:mlp.")
    found = loadable or can_load
    missing = [(library, package) for library, package in XCB_LIBRARIES if not found(library)]
    if not missing:
        return ""
    libraries = ", ".join(library for library, _ in missing)
    packages = " ".join(package for _, package in missing)
    return (f"the window cannot open: Qt's X11 platform plugin (xcb) needs {libraries}, which this system "
            f"lacks. Install {'it' if len(missing) == 1 else 'them'} (Debian, Ubuntu): sudo apt-get install "
            f"{packages}. Or use another platform: QT_QPA_PLATFORM=wayland in a Wayland session, "
            "QT_QPA_PLATFORM=offscreen for no window, or tflaunch bench in the terminal.")
