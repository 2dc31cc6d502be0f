"""paint_plot: a pyqtgraph plot painted onto any QPainter, the same on a QImage and in an SVG.

QGraphicsScene.render() nests clips (the view box clips its children, and each text item
clips itself inside that); Qt's SVG generator does not bring the outer clip back when an
inner one ends, so after the first label every band and curve of a plot took that
label's small box as its clip. Here each item is painted between a save and a restore
that return to no clip, with its whole clip (its ancestors' clips intersected, which Qt
computes) set afresh: nothing depends on a clip being restored.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsWidget, QStyleOptionGraphicsItem

NO_CONTENTS = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents


def paint_plot(painter: QPainter, item: QGraphicsWidget, target: QRectF) -> None:
    """Paint `item` and everything drawn inside it into `target` (painter coordinates),
    in the scene's stacking order."""
    scene = item.scene()
    source = item.sceneBoundingRect()
    view = (QTransform.fromTranslate(-source.x(), -source.y())
            * QTransform.fromScale(target.width() / source.width(), target.height() / source.height())
            * QTransform.fromTranslate(target.x(), target.y()))
    to_device = view * painter.worldTransform()
    option = QStyleOptionGraphicsItem()
    for graphic in scene.items(Qt.SortOrder.AscendingOrder):  # bottom first
        if not (graphic is item or item.isAncestorOf(graphic)) or not graphic.isVisible() \
                or graphic.flags() & NO_CONTENTS or graphic.effectiveOpacity() <= 0:
            continue
        clip = graphic.clipPath() if graphic.isClipped() else None  # the ancestors' clips intersected
        if clip is not None and clip.boundingRect().isEmpty():
            continue  # clipped away entirely (a label outside the view): it would draw nothing
        painter.save()
        try:
            # deviceTransform also places items that ignore transformations (the legend).
            painter.setWorldTransform(graphic.deviceTransform(to_device))
            if clip is not None:
                painter.setClipPath(clip)
            painter.setOpacity(graphic.effectiveOpacity())
            option.exposedRect = graphic.boundingRect()
            graphic.paint(painter, option, None)
        finally:
            painter.restore()
