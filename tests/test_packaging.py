"""Installed like a desktop program: the desktop entry, AppStream metainfo and icon in
packaging/linux/ pass Debian's validators (installed by `make test`), agree with each other
and with pyproject.toml, and `make install-desktop` puts working copies in the XDG folders."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINUX = ROOT / "packaging" / "linux"
APP_ID = "io.github.tflaunch.tflaunch"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"
ICON = LINUX / f"{APP_ID}.svg"


def _tool(name: str) -> str:
    path = shutil.which(name)
    # `make test` installs these (its system-deps step): missing here is a set-up fault, not a skip.
    assert path, f"{name} is not installed: run `make system-deps` (Debian packages desktop-file-utils, appstream)"
    return path


def _desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def _findings(output: str) -> list[str]:
    """Errors and warnings of a validator; hints and pedantic notes are advice."""
    return [line for line in output.splitlines()
            if line.startswith(("E:", "W:")) or ": error:" in line or ": warning:" in line]


def test_desktop_entry_is_valid() -> None:
    result = subprocess.run([_tool("desktop-file-validate"), str(DESKTOP)], capture_output=True, text=True)
    assert result.returncode == 0 and not _findings(result.stdout + result.stderr), result.stdout + result.stderr


def test_metainfo_is_valid() -> None:
    result = subprocess.run([_tool("appstreamcli"), "validate", "--no-net", "--strict", str(METAINFO)],
                            capture_output=True, text=True)
    assert result.returncode == 0 and not _findings(result.stdout), result.stdout + result.stderr


def test_entry_metainfo_icon_and_project_agree() -> None:
    entry = _desktop_entry(DESKTOP)
    component = ET.parse(METAINFO).getroot()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert component.findtext("id") == APP_ID == entry["Icon"] == ICON.stem
    assert component.findtext("launchable") == DESKTOP.name
    assert component.findtext("project_license") == project["license"]
    # The newest release named in the metainfo is the version being packaged.
    assert component.find("releases/release").get("version") == project["version"]
    # What the entry starts is a command the package installs.
    command = entry["Exec"].split()[0]
    assert command in project["gui-scripts"] and entry["TryExec"] == command
    binaries = {b.text for b in component.findall("provides/binary")}
    assert binaries == set(project["scripts"]) | set(project["gui-scripts"])


def test_icon_renders_at_menu_sizes(qapp) -> None:
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(ICON))
    assert renderer.isValid()
    assert renderer.defaultSize().width() == renderer.defaultSize().height()  # square, as icon themes expect
    for size in (16, 48, 256):
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(QColor(0, 0, 0, 0))
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        colours = {image.pixel(x, y) for x in range(size) for y in range(size)}
        assert len(colours) > 3, f"the icon renders blank at {size} px"
    # The app's window icon is the same file (resources/tflaunch.svg links to it), and the app
    # names the desktop entry it belongs to.
    assert (ROOT / "resources" / "tflaunch.svg").resolve() == ICON.resolve()
    from tflaunch.gui.app import DESKTOP_ID, create_app

    app = create_app()
    assert app.desktopFileName() == DESKTOP_ID == DESKTOP.stem
    assert app.windowIcon().pixmap(48, 48).width() == 48, "the window icon did not load"


def test_make_install_desktop_puts_working_copies_in_xdg_folders(tmp_path) -> None:
    data = tmp_path / "share"
    result = subprocess.run(["make", "-s", "-C", str(ROOT), "install-desktop", f"XDG_DATA_HOME={data}"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    installed = data / "applications" / DESKTOP.name
    assert (data / "metainfo" / METAINFO.name).read_bytes() == METAINFO.read_bytes()
    assert (data / "icons/hicolor/scalable/apps" / ICON.name).read_bytes() == ICON.read_bytes()
    entry = _desktop_entry(installed)
    # Exec names this checkout's own interpreter environment, so the menu starts this install.
    executable = Path(entry["Exec"].split()[0])
    assert executable.is_absolute() and os.access(executable, os.X_OK), entry["Exec"]
    assert executable.parent == Path(sys.executable).parent
    check = subprocess.run([_tool("desktop-file-validate"), str(installed)], capture_output=True, text=True)
    assert check.returncode == 0 and not _findings(check.stdout), check.stdout


@pytest.mark.parametrize("path", [DESKTOP, METAINFO, ICON])
def test_packaged_files_ship_readable(path: Path) -> None:
    assert path.stat().st_mode & 0o044 == 0o044  # readable by the desktop's other users
