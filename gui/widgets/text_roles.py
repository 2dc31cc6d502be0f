"""The app's three kinds of emphasised text, set on the label itself: a big figure, a
headline and a muted caption.

They were rules of an application style sheet until it was measured: with any application
sheet set, Qt polishes every widget through its style-sheet style, matching the rules for
each of the window's hundreds of widgets, and that was half of the window's build before
its first paint (about 70 ms of 130 ms). A font and a palette role on the few labels that
need them cost nothing at polish. The object names stay, for tests to find the labels by.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QLabel

# Captions draw in the palette's placeholder colour, which palette.follow_desktop_palette
# sets to the muted text colour of the current window colours (and sets again on a change).
CAPTION_ROLE = QPalette.ColorRole.PlaceholderText


def _emphasised(label: QLabel, points: float, name: str) -> QLabel:
    font = QFont(label.font())  # only size and weight are set: the family follows the desktop's
    font.setPointSizeF(points)
    font.setWeight(QFont.Weight.DemiBold)
    label.setFont(font)
    label.setObjectName(name)
    return label


def big_number(label: QLabel) -> QLabel:
    """A figure the run view leads with (time to ready, peak memory)."""
    return _emphasised(label, 22, "bigNumber")


def headline(label: QLabel) -> QLabel:
    """The one line that says how a run or a sweep stands."""
    return _emphasised(label, 12, "headline")


def caption(label: QLabel) -> QLabel:
    """Words under or beside a figure: muted, still 4.5:1 against the window."""
    label.setForegroundRole(CAPTION_ROLE)
    label.setObjectName("caption")
    return label
