"""The drilling template tiled over A4 or Letter pages at 1:1.

A board template is larger than a page (a 270 mm board printed on one A4
sheet comes out at about 67 %), so :func:`tiles` cuts the sheet of
:func:`firmware_py.bench.template.render_svg` into pages that each print at 100 %:
every page is an SVG sized in millimetres to the paper's printable area
(the paper less :data:`PRINT_MARGIN_MM` on each side, more than a browser's
or printer's own margin), whose view box is in the board's own millimetres,
so a mark has the same coordinates on every page that shows it.

Each page holds a window onto the board; neighbouring windows overlap by
:data:`OVERLAP_MM`, and alignment marks (a circle with a cross) sit in each
overlap, the same marks on both pages: lay one page over the other until
they coincide, then tape. A 100 mm scale bar runs along the top and another
down the left of every page, so each page can be checked both ways.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

#: Paper sizes, mm (width, height), portrait.
PAPERS = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
PRINT_MARGIN_MM = 12.7          #: left blank on every side of the paper
LEFT_STRIP_MM = 10.0            #: the strip left of the window: the vertical scale bar
TOP_STRIP_MM = 16.0             #: above the window: the page's label and the horizontal bar
BOTTOM_STRIP_MM = 12.0          #: below the window: the legend
OVERLAP_MM = 15.0
ALIGN_EVERY_MM = 60.0           #: alignment marks along each overlap, at most this far apart
#: An alignment mark's centre stays at least this far from a space's centre and its LED
#: hole's centre (the 8 mm square, the cross, the number, the 6 mm hole, the mark's arms).
ALIGN_CLEARANCE_MM = 11.0


@dataclass(frozen=True)
class Tile:
    """One page: its number (1-based), row and column (0-based), and the window it
    shows in board millimetres: ``x``, ``y`` (top-left), ``width``, ``height``."""

    number: int
    row: int
    column: int
    x: float
    y: float
    width: float
    height: float

    def contains(self, px: float, py: float, inset: float = 0.0) -> bool:
        """True when (px, py) lies in the window, at least ``inset`` mm inside it."""
        return (self.x + inset <= px <= self.x + self.width - inset
                and self.y + inset <= py <= self.y + self.height - inset)


def page_size(paper: str) -> tuple[float, float]:
    """The printable area of ``paper`` ("a4" or "letter"), mm: the SVG page's size.

    Raises:
        ValueError: for an unknown paper name.
    """
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, got {paper!r}")
    width, height = PAPERS[paper]
    return width - 2 * PRINT_MARGIN_MM, height - 2 * PRINT_MARGIN_MM


def _starts(lo: float, hi: float, window: float) -> list[float]:
    if hi - lo <= window:
        return [lo]
    count = math.ceil((hi - lo - OVERLAP_MM) / (window - OVERLAP_MM))
    return [lo + k * (window - OVERLAP_MM) for k in range(count)]


def tiles(area: tuple[float, float, float, float], paper: str) -> list[Tile]:
    """The pages covering ``area`` = (x, y, width, height) in board mm, row by row."""
    page_w, page_h = page_size(paper)
    win_w, win_h = page_w - LEFT_STRIP_MM, page_h - TOP_STRIP_MM - BOTTOM_STRIP_MM
    x0, y0, width, height = area
    columns = _starts(x0, x0 + width, win_w)
    rows = _starts(y0, y0 + height, win_h)
    return [Tile(r * len(columns) + c + 1, r, c, x, y, win_w, win_h)
            for r, y in enumerate(rows) for c, x in enumerate(columns)]


def alignment_marks(pages: list[Tile], avoid: Sequence[tuple[float, float]] = ()
                    ) -> list[tuple[float, float]]:
    """Points in the middle of every overlap between neighbouring pages, along it, each
    moved along the overlap to the nearest spot at least :data:`ALIGN_CLEARANCE_MM` from
    every point of ``avoid`` (space centres, LED holes; board mm). Where no such spot is
    within half the marks' spacing, the spot farthest from them there is used."""
    points = []
    for a in pages:
        for b in pages:
            if (b.row, b.column) == (a.row, a.column + 1):
                points += _along((a.x + a.width + b.x) / 2, a.y, a.height, True, avoid)
            elif (b.row, b.column) == (a.row + 1, a.column):
                points += _along((a.y + a.height + b.y) / 2, a.x, a.width, False, avoid)
    return sorted(set(points))


def _along(middle: float, start: float, length: float, vertical: bool,
           avoid: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    count = max(2, math.ceil((length - 2 * OVERLAP_MM) / ALIGN_EVERY_MM) + 1)
    step = (length - 2 * OVERLAP_MM) / (count - 1)

    def at(s: float) -> tuple[float, float]:
        """The point (x, y) in mm at ``s`` mm along the overlap strip."""
        return (middle, s) if vertical else (s, middle)

    def room(s: float) -> float:
        """Distance in mm from the mark at ``s`` to the nearest pocket or hole to avoid."""
        return min((math.dist(at(s), p) for p in avoid), default=math.inf)

    out = []
    for k in range(count):
        nominal = start + OVERLAP_MM + k * step
        lo, hi = max(start + 4.0, nominal - step / 2), min(start + length - 4.0, nominal + step / 2)
        tries = sorted((s for s in (nominal + d / 2 for d in range(-int(step), int(step) + 1))
                        if lo <= s <= hi), key=lambda s: abs(s - nominal))
        clear = next((s for s in tries if room(s) >= ALIGN_CLEARANCE_MM), None)
        out.append(at(round(clear if clear is not None else max(tries, key=room), 2)))
    return out


def _align_svg(x: float, y: float) -> str:
    return (f'<g class="align"><circle cx="{x:g}" cy="{y:g}" r="3" fill="none" stroke="black" '
            f'stroke-width="0.25"/><path d="M{x - 5:g} {y:g}H{x + 5:g}M{x:g} {y - 5:g}V{y + 5:g}" '
            'stroke="black" stroke-width="0.15"/></g>')


def _bars(tile: Tile) -> list[str]:
    x, y, half = tile.x, tile.y, LEFT_STRIP_MM / 2
    return [
        f'<path class="scale-x" d="M{x:g} {y - half:g}H{x + 100:g}" stroke="black" '
        'stroke-width="0.5"/>',
        f'<path d="M{x:g} {y - half - 1.5:g}V{y - half + 1.5:g}M{x + 100:g} {y - half - 1.5:g}'
        f'V{y - half + 1.5:g}" stroke="black" stroke-width="0.3"/>',
        f'<text x="{x + 102:g}" y="{y - half + 1:g}" font-size="2.8">100 mm</text>',
        f'<path class="scale-y" d="M{x - half:g} {y:g}V{y + 100:g}" stroke="black" '
        'stroke-width="0.5"/>',
        f'<path d="M{x - half - 1.5:g} {y:g}H{x - half + 1.5:g}M{x - half - 1.5:g} {y + 100:g}'
        f'H{x - half + 1.5:g}" stroke="black" stroke-width="0.3"/>',
        f'<text x="{x - half + 1:g}" y="{y + 102:g}" font-size="2.8" transform="rotate(90 '
        f'{x - half + 1:g} {y + 102:g})">100 mm</text>',
    ]


def page_svg(tile: Tile, count: int, paper: str, body: list[str],
             marks: list[tuple[float, float]], notes: list[str]) -> str:
    """One page as SVG text: ``body`` (board elements in board mm) clipped to the
    window, the alignment ``marks`` inside it, both scale bars, the page's label and
    ``notes`` (one line each, e.g. the legend)."""
    page_w, page_h = page_size(paper)
    left, top = tile.x - LEFT_STRIP_MM, tile.y - TOP_STRIP_MM
    label = (f"page {tile.number} of {count}: row {tile.row + 1}, column {tile.column + 1} "
             f"({paper.upper() if paper == 'a4' else 'Letter'}); print at 100 % / actual size; "
             f"pages overlap {OVERLAP_MM:g} mm: lay them so the circled crosses coincide")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{page_w:g}mm" height="{page_h:g}mm" '
           f'viewBox="{left:g} {top:g} {page_w:g} {page_h:g}" font-family="sans-serif" '
           f'data-page="{tile.number}" data-row="{tile.row}" data-column="{tile.column}">',
           f'<defs><clipPath id="window"><rect x="{tile.x:g}" y="{tile.y:g}" '
           f'width="{tile.width:g}" height="{tile.height:g}"/></clipPath></defs>',
           f'<rect class="window" x="{tile.x:g}" y="{tile.y:g}" width="{tile.width:g}" '
           f'height="{tile.height:g}" fill="none" stroke="#bbb" stroke-width="0.2"/>',
           '<g clip-path="url(#window)">', *body,
           *(_align_svg(x, y) for x, y in marks if tile.contains(x, y, 3.0)), "</g>",
           *_bars(tile),
           f'<text class="page" x="{tile.x:g}" y="{tile.y - 12:g}" font-size="3.2">'
           f'{escape(label[:label.index(";")])}</text>',
           f'<text x="{tile.x:g}" y="{tile.y - 8.5:g}" font-size="2.4">'
           f'{escape(label[label.index(";") + 2:])}</text>']
    for k, note in enumerate(notes):
        out.append(f'<text class="legend" x="{tile.x:g}" y="{tile.y + tile.height + 3.5 + 3 * k:g}" '
                   f'font-size="2.4" fill="#333">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
