"""A quilt board picture for the monochrome OLED: where the box's patch goes.

The quilt is drawn as a ``rows`` x ``cols`` grid inside a 1 px frame. Each
square is ``cell`` px with a 1 px gap: squares covered before this turn are
a checkerboard (grey), the patch placed now is solid (lit), a leather patch
placed now is solid with a dark centre, and empty squares stay dark with one
lit dot in their top-left corner so the grid can be counted.
"""
from __future__ import annotations

from PIL import ImageDraw

from .patch_art import _checker

Box = tuple[int, int, int, int]


def quilt_cell(rows: int, cols: int, width: int, height: int) -> int:
    """The largest square size in px that fits the framed grid into ``width`` x ``height``."""
    return max(1, min((width - 3) // cols, (height - 3) // rows) - 1)


def draw_quilt(draw: ImageDraw.ImageDraw, box: Box, rows: int, cols: int, before: int,
               patch: int = 0, leather: int = 0) -> Box:
    """Draw the quilt into ``box`` (left, top, width, height in px), top-left aligned.

    ``before``: bitmask of squares covered before the turn; ``patch``: the
    squares of the patch placed now; ``leather``: squares of leather patches
    placed now (bits ``row * cols + col``). Returns the box covered.
    """
    cell = quilt_cell(rows, cols, box[2], box[3])
    pitch = cell + 1
    left, top = box[0], box[1]
    width, height = cols * pitch + 3, rows * pitch + 3
    draw.rectangle((left, top, left + width - 1, top + height - 1), outline=255)
    for r in range(rows):
        for c in range(cols):
            bit = 1 << (r * cols + c)
            x, y = left + 2 + c * pitch, top + 2 + r * pitch
            if patch & bit or leather & bit:
                draw.rectangle((x, y, x + cell - 1, y + cell - 1), fill=255)
                if leather & bit and cell >= 3:
                    draw.rectangle((x + 1, y + 1, x + cell - 2, y + cell - 2), fill=0)
            elif before & bit:
                draw.bitmap((x, y), _checker(cell, 0), fill=255)
            else:
                draw.point((x, y), fill=255)
    return left, top, width, height
