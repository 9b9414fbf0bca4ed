"""Patch pictures and price labels for the monochrome OLED.

A patch is drawn from its printed ``shape`` rows ('#' covered, 'O' covered
with a printed button, '.' empty): each covered square is a filled square with
a 1 px gap to its neighbours; a button square is hollow with a dot in the
middle (just hollow when the squares are too small for a dot), so buttons stay
visible in one colour. A greyed patch (one that cannot be bought) is drawn as
a checkerboard-dithered silhouette, without the button marks.
"""
from __future__ import annotations

from functools import lru_cache

from PIL import Image, ImageDraw

from .fonts import BIG, BUTTON, HOURGLASS, THIN, TINY, Font

Box = tuple[int, int, int, int]


def cell_size(shape: tuple[str, ...], width: int, height: int, gap: int = 1,
              max_cell: int = 12) -> int:
    """The largest square size in px (<= ``max_cell``) at which ``shape``
    fits ``width`` x ``height`` px with ``gap`` px between squares; 0 if it
    does not fit at 1 px. Raises ValueError for an empty or ragged shape."""
    rows, cols = _dimensions(shape)
    size = min((width + gap) // cols, (height + gap) // rows) - gap
    return max(0, min(size, max_cell))


def _dimensions(shape: tuple[str, ...]) -> tuple[int, int]:
    if not shape or not shape[0] or any(len(row) != len(shape[0]) for row in shape):
        raise ValueError(f"patch shape must be equal, non-empty rows: {shape!r}")
    return len(shape), len(shape[0])


def draw_patch(draw: ImageDraw.ImageDraw, box: Box, shape: tuple[str, ...], *,
               grey: bool = False, fill: int = 1, gap: int = 1,
               max_cell: int = 12) -> Box:
    """Draw ``shape`` scaled to fit and centred in ``box``.

    ``box`` is (left, top, width, height) in px. Squares get the largest size
    up to ``max_cell`` px with ``gap`` px between them. ``grey`` dithers the
    squares (a checkerboard) to show an unavailable patch; ``fill`` 1 draws
    lit squares on a dark area, 0 dark squares on a lit one.
    Returns the box actually covered, (left, top, width, height); nothing is
    drawn (and the width is 0) when even 1 px squares do not fit.
    Raises ValueError for an empty or ragged shape.
    """
    rows, cols = _dimensions(shape)
    fill = 255 if fill else 0
    size = cell_size(shape, box[2], box[3], gap, max_cell)
    pitch = size + gap
    width, height = cols * pitch - gap, rows * pitch - gap
    left = box[0] + (box[2] - width) // 2
    top = box[1] + (box[3] - height) // 2
    if size == 0:
        return left, top, 0, 0
    for r, line in enumerate(shape):
        for c, ch in enumerate(line):
            if ch != ".":
                _square(draw, left + c * pitch, top + r * pitch, size, ch == "O", grey, fill)
    return left, top, width, height


def _square(draw, x: int, y: int, size: int, button: bool, grey: bool, fill: int) -> None:
    """One covered square; a button square is hollow with a centre dot; a
    grey square is a plain checkerboard (holes would break up the silhouette)."""
    if grey:
        draw.bitmap((x, y), _checker(size, (x + y) % 2), fill=fill)
        return
    draw.rectangle((x, y, x + size - 1, y + size - 1), fill=fill)
    if not button or size < 3:
        return
    draw.rectangle((x + 1, y + 1, x + size - 2, y + size - 2), fill=255 - fill)
    if size >= 5:
        dot = 2 if size % 2 == 0 else 1
        d0 = (size - dot) // 2
        draw.rectangle((x + d0, y + d0, x + d0 + dot - 1, y + d0 + dot - 1), fill=fill)


@lru_cache(maxsize=64)
def _checker(size: int, phase: int) -> Image.Image:
    """A ``size`` px square checkerboard mask; ``phase`` 0 sets (0, 0)."""
    image = Image.new("1", (size, size), 0)
    image.putdata([1 if (x + y + phase) % 2 == 0 else 0
                   for y in range(size) for x in range(size)])
    return image


def label_text(cost: int, time: int) -> str:
    """The price as icon text: "5<button> 4<hourglass>" (cost in buttons,
    time in spaces), for :meth:`Font.draw`."""
    return f"{cost}{BUTTON}{THIN}{time}{HOURGLASS}"


def income_text(income: int) -> str:
    """"+2" for a patch that pays 2 buttons of income, "" for none."""
    return f"+{income}" if income > 0 else ""


def label_width(cost: int, time: int, income: int, font: Font = BIG,
                small: Font = TINY) -> int:
    """Width in px from the first to the last lit column of :func:`draw_label`
    with the income included (when there is one)."""
    extra = income_text(income)
    main = font.width(label_text(cost, time)) - 1
    return main + (1 + small.width(extra) if extra else 0)


def draw_label(draw: ImageDraw.ImageDraw, xy: tuple[int, int], cost: int, time: int,
               income: int, *, font: Font = BIG, small: Font = TINY, fill: int = 1,
               max_width: int = 128) -> int:
    """Draw "5(b) 4(t) +2": cost with a button icon, time with an hourglass in
    ``font``, then the income in ``small`` (raised to the capital line) if the
    whole label then fits in ``max_width`` px. ``xy`` is the line top-left;
    returns the width drawn, first to last lit column, in px."""
    x = font.draw(draw, xy, label_text(cost, time), fill)
    width = x - 1 - xy[0]
    extra = income_text(income)
    if extra and width + 1 + small.width(extra) <= max_width:
        small.draw(draw, (x + 1, xy[1] + font.top), extra, fill)
        width += 1 + small.width(extra)
    return width
