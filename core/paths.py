"""Where tflaunch keeps its files, by platform convention, without Qt.

The GUI uses these too, so the app and the command line always share one history and
one set of profiles. TFLAUNCH_DATA_DIR and TFLAUNCH_CONFIG_DIR override them (tests, or
a shared team folder for profiles).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "tflaunch"


def data_dir() -> Path:
    """Run history lives here: ~/.local/share/tflaunch on Linux."""
    if os.environ.get("TFLAUNCH_DATA_DIR"):
        return Path(os.environ["TFLAUNCH_DATA_DIR"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / APP
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / APP


def config_dir() -> Path:
    """Launch profiles live here: ~/.config/tflaunch on Linux."""
    if os.environ.get("TFLAUNCH_CONFIG_DIR"):
        return Path(os.environ["TFLAUNCH_CONFIG_DIR"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Preferences" / APP
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming")) / APP
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / APP


def history_path() -> Path:
    return data_dir() / "history.sqlite3"


def profiles_dir() -> Path:
    return config_dir() / "profiles"


def cache_dir() -> Path:
    """Caches tflaunch keeps for launches (CUDA kernels, XLA programs): ~/.cache/tflaunch.

    Under TFLAUNCH_DATA_DIR when that is set and TFLAUNCH_CACHE_DIR is not, so a test or a
    shared data folder keeps its caches beside its history."""
    if os.environ.get("TFLAUNCH_CACHE_DIR"):
        return Path(os.environ["TFLAUNCH_CACHE_DIR"])
    if os.environ.get("TFLAUNCH_DATA_DIR"):
        return data_dir() / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / APP
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / APP / "cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / APP
