"""page_coordinates: Qt's SVG rewritten so every shape lies in page coordinates.

QSvgGenerator writes each shape in its item's own coordinates under a group transform
(a plot's data-to-pixels scale, 400× and more) and keeps a 1 px cosmetic pen 1 px wide
only through `vector-effect="non-scaling-stroke"`. Renderers without that SVG Tiny 1.2
attribute (ImageMagick, LibreOffice, older Inkscape) scale the stroke with the data: a
curve became a ribbon, a median line a block. Moving the transform into the coordinates
makes every stroke width plain page pixels, as the PNG draws it. Text and images keep
a transform of their own: glyphs are not geometry to rewrite (text_boxes says where each
text lies, for the tests that check a picture holds all its words).

Clipping is the other thing renderers disagree on: Qt's own renderer ignores clipPath and
ImageMagick inverts it. A plot clips to rectangles (its view, a label's box), so a shape
that lies inside its clip loses the clip, and a rectangle (a band, a bar) reaching out of
it is cut to it here; only what is left (a curve leaving its view) keeps a clip-path.

Translucency is the third: ImageMagick's own renderer ignores fill-opacity, so the phase
bands became solid blocks. Translucent fills (bands, a legend's box) lie on the white plot
background of a review page, where a translucent colour is exactly an opaque tint of it,
which every renderer draws alike. Translucent strokes stay as they are: the grid is drawn
over the curves, and an opaque tint would cut them.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG)
ET.register_namespace("xlink", XLINK)

Matrix = tuple[float, float, float, float, float, float]  # a, b, c, d, e, f as SVG writes them
_MATRIX = re.compile(r"^\s*matrix\(([^)]*)\)\s*$")
_PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_ABSOLUTE_PAIRS = set("MLCQSTZ")  # what Qt writes: absolute points only (Z takes none)


def page_coordinates(svg: bytes) -> bytes:
    """The same drawing with no transformed group left around shapes."""
    root = ET.fromstring(svg)
    for group in root.iter(f"{{{SVG}}}g"):  # document order: outer groups first
        matrix = _parse(group.get("transform"))
        if matrix is None:
            continue
        for child in group:
            _place(child, matrix, group)
        del group.attrib["transform"]
    for element in root.iter():
        if not element.get("transform"):  # in page pixels now: scaling or not is all one
            element.attrib.pop("vector-effect", None)
    _cut_to_clips(root)
    _tint_over_white(root)
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True)


_HEX = re.compile(r"^#([0-9a-fA-F]{6})$")


def _tint_over_white(root: ET.Element) -> None:
    """Each translucent #rrggbb fill as the opaque colour it makes on white."""
    for element in root.iter():
        for paint in ("fill",):
            colour, opacity = element.get(paint) or "", element.get(f"{paint}-opacity")
            match = _HEX.match(colour)
            if match is None or opacity is None:
                continue
            try:
                alpha = min(max(float(opacity), 0.0), 1.0)
            except ValueError:
                continue
            rgb = bytes.fromhex(match.group(1))
            element.set(paint, "#" + "".join(f"{round(255 - alpha * (255 - c)):02x}" for c in rgb))
            element.set(f"{paint}-opacity", "1")


def _parse(transform: str | None) -> Matrix | None:
    match = _MATRIX.match(transform or "")
    if match is None:
        return None
    values = [float(v) for v in match.group(1).replace(",", " ").split()]
    return (values[0], values[1], values[2], values[3], values[4], values[5]) if len(values) == 6 else None


def _map(m: Matrix, x: float, y: float) -> tuple[float, float]:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def _num(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if math.isfinite(value) else "0"


def _pairs(m: Matrix, points: list[tuple[float, float]]) -> str:
    return " ".join(f"{_num(x)},{_num(y)}" for x, y in (_map(m, px, py) for px, py in points))


def _place(element: ET.Element, m: Matrix, group: ET.Element) -> None:
    """Move the group's transform into `element`: into its coordinates where it is a shape,
    onto the element itself where it is not."""
    tag = element.tag.rsplit("}", 1)[-1]
    a, b, c, d, _, _ = m
    axis_aligned = b == 0 and c == 0
    if tag == "path" and (data := _path(m, element.get("d", ""))) is not None:
        element.set("d", data)
    elif tag in ("polyline", "polygon"):
        numbers = [float(v) for v in element.get("points", "").replace(",", " ").split()]
        element.set("points", _pairs(m, list(zip(numbers[::2], numbers[1::2], strict=False))))
    elif tag == "line":
        for x_name, y_name in (("x1", "y1"), ("x2", "y2")):
            px, py = _map(m, float(element.get(x_name, 0)), float(element.get(y_name, 0)))
            element.set(x_name, _num(px))
            element.set(y_name, _num(py))
    elif tag == "rect" and not element.get("rx") and not element.get("ry"):
        x, y = float(element.get("x", 0)), float(element.get("y", 0))
        w, h = float(element.get("width", 0)), float(element.get("height", 0))
        corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
        if axis_aligned:
            (x0, y0), (x1, y1) = _map(m, x, y), _map(m, x + w, y + h)
            for name, value in (("x", min(x0, x1)), ("y", min(y0, y1)), ("width", abs(x1 - x0)),
                                ("height", abs(y1 - y0))):
                element.set(name, _num(value))
        else:  # turned or sheared: a rectangle no longer
            element.tag = f"{{{SVG}}}polygon"
            for name in ("x", "y", "width", "height"):
                element.attrib.pop(name, None)
            element.set("points", _pairs(m, corners))
    elif tag in ("ellipse", "circle") and axis_aligned:
        cx, cy = _map(m, float(element.get("cx", 0)), float(element.get("cy", 0)))
        rx = float(element.get("rx", element.get("r", 0))) * abs(a)
        ry = float(element.get("ry", element.get("r", 0))) * abs(d)
        element.tag = f"{{{SVG}}}ellipse"
        element.attrib.pop("r", None)
        for name, value in (("cx", cx), ("cy", cy), ("rx", rx), ("ry", ry)):
            element.set(name, _num(value))
    else:  # text, images, anything else: the transform stays, on the element itself
        own = element.get("transform", "")
        element.set("transform", f"matrix({','.join(_num(v) for v in m)}) {own}".strip())
        return
    _keep_stroke_width(element, m, group)


def _path(m: Matrix, data: str) -> str | None:
    """Path data with every point mapped; None for commands Qt does not write (relative,
    arcs, H/V), which then keep their transform instead."""
    out: list[str] = []
    numbers: list[float] = []
    for token in _PATH_TOKEN.findall(data):
        if token.isalpha():
            if token not in _ABSOLUTE_PAIRS:
                return None
            out.append(token)
        else:
            numbers.append(float(token))
            if len(numbers) == 2:
                x, y = _map(m, *numbers)
                out.append(f"{_num(x)},{_num(y)}")
                numbers = []
    return " ".join(out) if not numbers else None


def _keep_stroke_width(element: ET.Element, m: Matrix, group: ET.Element) -> None:
    """A cosmetic (non-scaling) stroke is already in page pixels; a scaling one grows with
    the transform it just lost (isotropically, as Inkscape and Illustrator draw it)."""
    if element.attrib.pop("vector-effect", "none") == "non-scaling-stroke":
        return
    if (element.get("stroke") or group.get("stroke") or "none") == "none":
        return
    scale = math.sqrt(abs(m[0] * m[3] - m[1] * m[2]))
    width = float(element.get("stroke-width") or group.get("stroke-width") or 1)
    element.set("stroke-width", _num(width * scale))
    dashes = element.get("stroke-dasharray") or group.get("stroke-dasharray")
    if dashes and dashes != "none":
        element.set("stroke-dasharray", ",".join(_num(float(v) * scale) for v in dashes.replace(",", " ").split()))


Box = tuple[float, float, float, float]  # left, top, right, bottom
_CLIP_REF = re.compile(r"^url\(#([^)]+)\)$")


def _cut_to_clips(root: ET.Element) -> None:
    clips: dict[str, Box | None] = {}
    for clip in root.iter(f"{{{SVG}}}clipPath"):
        shapes = list(clip)
        clips[clip.get("id", "")] = _rectangle(shapes[0]) if len(shapes) == 1 else None
    parents = {child: parent for parent in root.iter() for child in parent}
    for group in list(root.iter(f"{{{SVG}}}g")):
        match = _CLIP_REF.match(group.get("clip-path", ""))
        box = clips.get(match.group(1)) if match else None
        if box is None:
            continue
        still_clipped = False
        for element in list(group.iter()):
            if element is group or element.tag.rsplit("}", 1)[-1] in ("g", "text", "tspan"):
                continue  # text: clipped to its own box, which holds it
            inside = _within(element, box)
            if inside is None:
                still_clipped = True
            elif not inside and not _cut(element, box):
                parents[element].remove(element)  # wholly outside its clip
        if not still_clipped:
            del group.attrib["clip-path"]


def _points(element: ET.Element) -> list[tuple[float, float]] | None:
    tag = element.tag.rsplit("}", 1)[-1]
    if element.get("transform"):
        return None
    if tag == "path":
        numbers = [float(t) for t in _PATH_TOKEN.findall(element.get("d", "")) if not t.isalpha()]
    elif tag in ("polyline", "polygon"):
        numbers = [float(v) for v in element.get("points", "").replace(",", " ").split()]
    elif tag == "rect":
        x, y = float(element.get("x", 0)), float(element.get("y", 0))
        numbers = [x, y, x + float(element.get("width", 0)), y + float(element.get("height", 0))]
    elif tag == "line":
        numbers = [float(element.get(n, 0)) for n in ("x1", "y1", "x2", "y2")]
    else:
        return None
    return list(zip(numbers[::2], numbers[1::2], strict=False))


def _rectangle(shape: ET.Element) -> Box | None:
    """The box a clip shape is, if it is an upright rectangle."""
    points = _points(shape)
    if not points:
        return None
    xs, ys = {round(x, 3) for x, _ in points}, {round(y, 3) for _, y in points}
    if len(xs) > 2 or len(ys) > 2 or (shape.tag.endswith("path") and len(points) < 4):
        return None
    return min(xs), min(ys), max(xs), max(ys)


def _within(element: ET.Element, box: Box) -> bool | None:
    """True inside the box, False not (a rectangle, which can be cut), None unknown (keep
    the clip). A path's control points hold its curves, so their bounds are enough."""
    points = _points(element)
    if points is None:
        return None
    if not points:
        return True
    left, top, right, bottom = box
    if all(left <= x <= right and top <= y <= bottom for x, y in points):
        return True
    return False if element.tag.endswith("}rect") else None


def _cut(rect: ET.Element, box: Box) -> bool:
    """Cut a rectangle to the box; False if nothing of it is left."""
    x, y = float(rect.get("x", 0)), float(rect.get("y", 0))
    left, top = max(x, box[0]), max(y, box[1])
    right = min(x + float(rect.get("width", 0)), box[2])
    bottom = min(y + float(rect.get("height", 0)), box[3])
    if right <= left or bottom <= top:
        return False
    for name, value in (("x", left), ("y", top), ("width", right - left), ("height", bottom - top)):
        rect.set(name, _num(value))
    return True


# What a text's box needs from the fonts: (width, ascent, descent) of `text` in a font
# family at a size in pixels, bold or not. The caller measures (Qt's metrics in the app).
Measure = Callable[[str, str, float, bool], tuple[float, float, float]]


@dataclass(frozen=True)
class TextBox:
    """A text element of the page: its string and the box its glyphs take, in page pixels."""

    text: str
    left: float
    top: float
    right: float
    bottom: float
    size: float

    def within(self, box: Box, slack: float = 0.5) -> bool:
        left, top, right, bottom = box
        return (self.left >= left - slack and self.top >= top - slack and self.right <= right + slack
                and self.bottom <= bottom + slack)


def text_boxes(svg: bytes, measure: Measure) -> list[TextBox]:
    """Every text element of a page_coordinates() SVG with the box its glyphs cover: from
    its baseline, its transform (a translation and scale Qt keeps on text) and its font as
    `measure` says; a line of tspans is one box per tspan."""
    root = ET.fromstring(svg)
    boxes = []
    for element in root.iter(f"{{{SVG}}}text"):
        m = _parse(element.get("transform")) or (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
        family = element.get("font-family", "")
        size = float(element.get("font-size", "12").removesuffix("px").removesuffix("pt"))
        bold = element.get("font-weight", "400") in ("bold", "600", "700", "800", "900")
        parts = [element, *element.iter(f"{{{SVG}}}tspan")] if len(element) else [element]
        for part in parts:
            text = "".join(part.itertext()) if part is element and not len(element) else (part.text or "")
            if not text.strip() or part.get("x") is None and part is not element:
                continue
            x, y = float(part.get("x", element.get("x", 0))), float(part.get("y", element.get("y", 0)))
            width, ascent, descent = measure(text, family, size, bold)
            corners = [_map(m, x, y - ascent), _map(m, x + width, y + descent)]
            xs, ys = [p[0] for p in corners], [p[1] for p in corners]
            boxes.append(TextBox(text, min(xs), min(ys), max(xs), max(ys), size * abs(m[3])))
    return boxes
