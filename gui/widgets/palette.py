"""Colours shared by the views, chosen to stay apart for colour-blind readers and in print,
and the functions that keep text in them readable on the desktop's light or dark palette.

The dictionaries are the identity colours (bars, bands, review images on white). Text
drawn in one of them goes through readable(), which moves its lightness just far enough
for a WCAG contrast of 4.5:1 against the current palette's background.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionTabWidgetFrame, QWidget

# A phase's colour is core's (tflaunch.core.phases.colour), the same in the CLI's review
# images: reserved Okabe–Ito colours for the known names, a stable one for any other.

STATE_COLORS: dict[str, str] = {
    "waiting": "#7a7a7a",
    "running": "#0b57d0",
    "done": "#146c2e",
    "failed": "#b3261e",
    "cancelled": "#8a5a00",
}

RSS_COLOR = "#0b57d0"
PEAK_COLOR = "#b3261e"
# GPU memory curves, one per device in this order (repeating past eight): apart from the RSS
# blue and the peak red, and readable on a light or a dark plot.
GPU_COLORS: tuple[str, ...] = ("#8e24aa", "#00897b", "#ef6c00", "#d81b60", "#43a047", "#00acc1", "#8d6e63",
                               "#546e7a")
ERROR_COLOR = "#b3261e"  # the reason next to a setting that cannot be used

# How a run stands (RunStatus values), in the same colours as phase states.
STATUS_COLORS: dict[str, str] = {
    "running": STATE_COLORS["running"],
    "ok": STATE_COLORS["done"],
    "failed": STATE_COLORS["failed"],
    "timed out": STATE_COLORS["failed"],
    "cancelled": STATE_COLORS["cancelled"],
    "interrupted": STATE_COLORS["cancelled"],
    "warning": "#9a5b00",  # ready, but on an assumption (an input shape nobody set)
}

TEXT_CONTRAST = 4.5  # WCAG AA for text
GRAPHIC_CONTRAST = 3.0  # WCAG AA for lines and marks
# A cell that stands out (a setting that differs): a pale yellow on light, a dim amber on dark.
HIGHLIGHT_LIGHT, HIGHLIGHT_DARK = "#fff3c4", "#5a4a14"


def luminance(color: QColor) -> float:
    """WCAG relative luminance, 0 (black) to 1 (white)."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * linear(color.redF()) + 0.7152 * linear(color.greenF()) + 0.0722 * linear(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio, 1 (none) to 21 (black on white)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def current_palette() -> QPalette:
    return QApplication.palette()


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether the palette draws light text on a dark window (a dark desktop theme)."""
    palette = palette or current_palette()
    return luminance(palette.color(QPalette.ColorRole.Window)) < luminance(
        palette.color(QPalette.ColorRole.WindowText))


def background(palette: QPalette | None = None) -> QColor:
    """Where lists, tables and plots draw: the palette's Base."""
    return (palette or current_palette()).color(QPalette.ColorRole.Base)


def readable(color: str | QColor, on: QColor | None = None, ratio: float = TEXT_CONTRAST) -> QColor:
    """`color` with the same hue, made just light or dark enough for `ratio` against `on`
    (the palette's Base unless given); unchanged when it already is."""
    color, on = QColor(color), QColor(on) if on is not None else background()
    if contrast(color, on) >= ratio:
        return color
    lighter = luminance(on) < 0.18  # the side with room: away from the background
    hue, saturation, lightness, alpha = color.hslHueF(), color.hslSaturationF(), color.lightnessF(), color.alphaF()
    low, high = (lightness, 1.0) if lighter else (0.0, lightness)
    for _ in range(20):  # bisect the lightness: the smallest change that reaches the ratio
        middle = (low + high) / 2
        candidate = QColor.fromHslF(max(hue, 0.0), saturation, middle, alpha)
        good = contrast(candidate, on) >= ratio
        if good == lighter:
            high = middle
        else:
            low = middle
    lightness = high if lighter else low
    result = QColor.fromHslF(max(hue, 0.0), saturation, lightness, alpha)
    # The colour is stored (and written into style sheets) in 8 bits a channel: rounding can
    # take it just under the ratio, so step on until the stored colour reaches it.
    step = 0.002 if lighter else -0.002
    while contrast(QColor(result.name()), on) < ratio and 0.0 < lightness < 1.0:
        lightness = min(1.0, max(0.0, lightness + step))
        result = QColor.fromHslF(max(hue, 0.0), saturation, lightness, alpha)
    return result


def status_color(status: str, on: QColor | None = None) -> QColor:
    """A RunStatus value (or "warning") as readable text."""
    return readable(STATUS_COLORS.get(status, STATE_COLORS["waiting"]), on)


def mix(a: QColor, b: QColor, share_of_a: float) -> QColor:
    s = share_of_a
    return QColor.fromRgbF(a.redF() * s + b.redF() * (1 - s), a.greenF() * s + b.greenF() * (1 - s),
                           a.blueF() * s + b.blueF() * (1 - s))


def page_background(palette: QPalette | None = None) -> QColor:
    """What a tab's page is painted with, where the run's headline and captions sit: the
    style's tab frame, which is not the window's colour (Fusion's dark one is #494949 on a
    #2b2b2b window, and a green chosen for the window read 2.9:1 there). Read by painting the
    frame, so whichever style draws it is what is measured; once per palette."""
    palette = palette or current_palette()
    key = palette.cacheKey()
    if key not in _PAGES:
        image = QImage(24, 24, QImage.Format.Format_ARGB32)
        image.fill(0)
        option = QStyleOptionTabWidgetFrame()
        option.rect, option.palette = image.rect(), palette
        painter = QPainter(image)
        QApplication.style().drawPrimitive(QStyle.PrimitiveElement.PE_FrameTabWidget, option, painter)
        painter.end()
        page = QColor(image.pixel(12, 12))
        _PAGES[key] = page if page.alpha() == 255 else palette.color(QPalette.ColorRole.Window)
    return QColor(_PAGES[key])


_PAGES: dict[int, QColor] = {}  # page_background by the palette's cache key


def muted_text(palette: QPalette | None = None) -> QColor:
    """Captions: the text colour part way to the window's, still 4.5:1 against the window
    and against a tab's page, whichever is nearer the text."""
    palette = palette or current_palette()
    text, window = palette.color(QPalette.ColorRole.WindowText), palette.color(QPalette.ColorRole.Window)
    nearer = min((window, page_background(palette)), key=lambda back: contrast(text, back))
    return readable(mix(text, window, 0.65), nearer)


def error_style(palette: QPalette | None = None) -> str:
    """Style sheet of a label that says what is wrong (next to a setting, on the window)."""
    window = (palette or current_palette()).color(QPalette.ColorRole.Window)
    return f"color: {readable(ERROR_COLOR, window).name()};"


def highlight_background(palette: QPalette | None = None) -> QColor:
    return QColor(HIGHLIGHT_DARK if is_dark(palette) else HIGHLIGHT_LIGHT)


def keep_colours(widget: QWidget, recolour: Callable[[], None]) -> None:
    """Call `recolour` whenever the desktop's palette changes, for as long as `widget` lives:
    for a view whose colours (status text, plot backgrounds) are chosen for the palette."""
    _Recolourer(widget, recolour)


def follow_desktop_palette() -> None:
    """Give the application palette's placeholder colour, which captions draw in, the muted
    text colour of the current window colours, if those changed since it was last set.

    Only that role is set on the application palette: Qt keeps following the desktop for
    every other role, and brings a new palette to every widget itself."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    palette = app.palette()
    key = " ".join(palette.color(role).name() for role in (QPalette.ColorRole.Window, QPalette.ColorRole.WindowText))
    if app.property(_PALETTE_KEY) == key:
        return
    app.setProperty(_PALETTE_KEY, key)  # first: setting the palette below comes back here
    muted = muted_text(palette)
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        palette.setColor(group, QPalette.ColorRole.PlaceholderText, muted)
    app.setPalette(palette)


_PALETTE_KEY = "tflaunchPaletteKey"  # the window colours the placeholder colour was last set for
_RECOLOURER, _WATCHER = "tflaunchRecolourer", "tflaunchPaletteWatcher"


class _Recolourer(QObject):
    """One view's recolouring: run once the new palette has reached every widget (a view
    learns of it before its children have it), and at most once per change."""

    def __init__(self, widget: QWidget, recolour: Callable[[], None]) -> None:
        super().__init__(widget)
        self.setObjectName(_RECOLOURER)
        self._widget, self._recolour, self._pending = widget, recolour, False
        widget.installEventFilter(self)
        follow_desktop_palette()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self._widget:
            if event.type() == QEvent.Type.Show:  # in its window now: have the window watched
                window = self._widget.window()
                if window.findChild(QObject, _WATCHER) is None:
                    _WindowPaletteWatcher(window)
            elif event.type() == QEvent.Type.PaletteChange:
                self.schedule()
        return False

    def schedule(self) -> None:
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, self._run)

    def _run(self) -> None:
        self._pending = False
        self._recolour()


class _WindowPaletteWatcher(QObject):
    """Told by its window of a new application palette, it brings the caption colour in
    step, then has every view in the window recolour itself."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName(_WATCHER)
        self._window = window
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self._window and event.type() in (QEvent.Type.ApplicationPaletteChange,
                                                        QEvent.Type.PaletteChange):
            follow_desktop_palette()
            for child in self._window.findChildren(QObject, _RECOLOURER):
                if isinstance(child, _Recolourer):
                    child.schedule()
        return False
