"""The window's start replaces PySide6's per-module source check with one that reads the
file's bytes: it must give PySide6's own answer for every kind of module."""

from __future__ import annotations

import json
import sys

import tflaunch.core.units
import tflaunch.gui.app
from tflaunch.gui import pyside_source_check


def test_the_byte_check_answers_as_pyside6_does():
    import PySide6.QtCore  # noqa: F401

    feature = sys.modules["shibokensupport.feature"]
    original = feature._mod_uses_pyside
    modules = (tflaunch.gui.app, tflaunch.core.units, json, sys, pyside_source_check)
    expected = [original(m) for m in modules]
    pyside_source_check.install()
    try:
        replaced = feature._mod_uses_pyside
        assert replaced is not original, "installed"
        assert [replaced(m) for m in modules] == expected == [True, False, False, False, True]
        pyside_source_check.install()
        assert feature._mod_uses_pyside is replaced, "installed once"
    finally:
        feature._mod_uses_pyside = original
