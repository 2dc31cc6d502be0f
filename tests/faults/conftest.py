"""The fault matrix uses the app's real window where a fault reaches the app."""

from ..gui.conftest import make_window, settings_file, window  # noqa: F401 (pytest fixtures)
