"""``patchwork-companion template``: a printable 1:1 drilling template of the time board.

It reads a *centres file* (TOML) holding the centre of every time-board space
as measured on the maker's own board, and writes an SVG whose user unit is
one millimetre and whose width and height are given in ``mm``, so a browser
or vector program printing at 100 % ("actual size") gives a sheet to tape
under the board: one numbered mark per space, where its hall sensor goes,
with the sensor's breakout square, a TO-92's pocket and the LED's hole beside
it, each with its size in the legend. A 100 mm scale bar checks the print.
:func:`pages` tiles the same marks over A4 or Letter pages at 1:1
(:mod:`firmware_py.bench.template_pages`). The centres file::

    game = "patchwork"        # "patchwork" (54 spaces, 0..53) or "patchwork-express" (30)
    approximate = false       # true prints "APPROXIMATE" across the sheet
    width_mm = 176.0          # the board's size (the sheet adds a 10 mm margin)
    height_mm = 176.0
    note = "my copy, measured with calipers"      # optional, printed in the corner
    # x to the right, y down, in mm from the board's top-left corner; space 0 first
    centres = [[11.0, 11.0], [33.0, 11.0], ...]

The shipped default (``firmware_py/data/time-board-centres.toml``) is a square
spiral at a 22 mm pitch, **not** measured from a real board: it is marked
approximate and says so on the print. hardware/mechanical.md tells how to
measure.
"""
from __future__ import annotations

import math
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

SPACES = {"patchwork": 54, "patchwork-express": 30}
MARGIN_MM = 10.0
MARK_RADIUS_MM = 4.0      #: half the sensor mark: the SOT-23 breakout's 8 mm square
TO92_POCKET_MM = (5.0, 4.0, 1.5)   #: a TO-92 lying flat: pocket width, length, depth
LED_HOLE_MM = 6.0         #: the LED's hole through the plate
LED_OFFSET_MM = 10.0      #: from the space's centre to the LED hole's centre
MIN_APART_MM = 5.0        #: two centres closer than this are taken for a typo
#: Space centres closer than this put a token's field on the neighbour's sensor
#: (hardware/field_model.py's recommended spacing for its recommended magnet and
#: stack-up; tests/hw/test_field_model.py keeps the two equal).
SPACING_MM = 18.6
LEGEND = (
    f"square {2 * MARK_RADIUS_MM:g} x {2 * MARK_RADIUS_MM:g} mm: the SOT-23 sensor's breakout, "
    "glued under the plate, sensor face up; centre punch at the cross",
    f"dashed {TO92_POCKET_MM[0]:g} x {TO92_POCKET_MM[1]:g} mm: a TO-92 lying flat instead, in a "
    f"pocket {TO92_POCKET_MM[2]:g} mm deep in the plate's underside, marked face up",
    f"circle {LED_HOLE_MM:g} mm: the LED's hole through the plate, its centre "
    f"{LED_OFFSET_MM:g} mm from the space's centre",
)
DEFAULT = Path(__file__).resolve().parents[1] / "data" / "time-board-centres.toml"


class CentresError(ValueError):
    """A centres file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Centres:
    """The measured board: ``game``, ``width_mm`` x ``height_mm`` (> 0), one (x, y)
    centre in mm per space (space 0 first, inside the board), ``approximate``
    (print the warning) and a free ``note``."""

    game: str
    width_mm: float
    height_mm: float
    centres: tuple[tuple[float, float], ...]
    approximate: bool
    note: str = ""


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CentresError(f"{where} must be a number of millimetres, got {value!r}")
    return float(value)


def _centre(index: int, pair, where: str, w: float, h: float) -> tuple[float, float]:
    if not isinstance(pair, list) or len(pair) != 2:
        raise CentresError(f"{where}: centres[{index}] (space {index}) must be [x, y], got {pair!r}")
    x = _number(pair[0], f"{where}: centres[{index}] x")
    y = _number(pair[1], f"{where}: centres[{index}] y")
    if not (0 <= x <= w and 0 <= y <= h):
        raise CentresError(f"{where}: space {index} at ({x:g}, {y:g}) mm lies outside the "
                           f"{w:g} x {h:g} mm board")
    return x, y


def parse_centres(text: str, where: str = "centres file") -> Centres:
    """Check and read a centres file's TOML ``text``; ``where`` names it in errors.

    Raises :class:`CentresError` for bad TOML, a missing or wrong key, a count
    that does not match the game, a centre outside the board, or two centres
    closer than :data:`MIN_APART_MM`.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CentresError(f"{where} is not valid TOML: {exc}") from None
    game = data.get("game", "patchwork")
    if game not in SPACES:
        raise CentresError(f"{where}: game must be one of {', '.join(SPACES)}, got {game!r}")
    approximate = data.get("approximate", False)
    if not isinstance(approximate, bool):
        raise CentresError(f"{where}: approximate must be true or false, got {approximate!r}")
    note = data.get("note", "")
    if not isinstance(note, str):
        raise CentresError(f"{where}: note must be text, got {note!r}")
    width = _number(data.get("width_mm"), f"{where}: width_mm")
    height = _number(data.get("height_mm"), f"{where}: height_mm")
    if width <= 0 or height <= 0:
        raise CentresError(f"{where}: width_mm and height_mm must be > 0")
    raw = data.get("centres")
    if not isinstance(raw, list) or len(raw) != SPACES[game]:
        count = len(raw) if isinstance(raw, list) else "no"
        raise CentresError(f"{where}: {game} needs centres for {SPACES[game]} spaces "
                           f"(0..{SPACES[game] - 1}), got {count}")
    centres = tuple(_centre(i, pair, where, width, height) for i, pair in enumerate(raw))
    _check_apart(centres, where)
    return Centres(game, width, height, centres, approximate, note)


def _check_apart(centres, where: str) -> None:
    for i, (x1, y1) in enumerate(centres):
        for j in range(i + 1, len(centres)):
            x2, y2 = centres[j]
            if math.hypot(x2 - x1, y2 - y1) < MIN_APART_MM:
                raise CentresError(f"{where}: spaces {i} and {j} are "
                                   f"{math.hypot(x2 - x1, y2 - y1):.1f} mm apart "
                                   f"(less than {MIN_APART_MM:g} mm): a typo?")


def load_centres(path: str | Path | None = None) -> Centres:
    """Read the centres file at ``path`` (default: the shipped approximate one)."""
    path = Path(path) if path else DEFAULT
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise CentresError(f"cannot read the centres file {path}: {exc.strerror or exc}") from None
    return parse_centres(text, str(path))


def render_svg(board: Centres) -> str:
    """The template as SVG text: user unit = 1 mm, the board's top-left at (0, 0),
    one ``<g class="mark" data-space="n">`` per space with a circle at its centre."""
    w, h, m = board.width_mm, board.height_mm, MARGIN_MM
    tall = h + 2 * m + 16 + 3 * len(LEGEND)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + 2 * m:g}mm" '
           f'height="{tall:g}mm" viewBox="{-m:g} {-m:g} {w + 2 * m:g} {tall:g}" '
           'font-family="sans-serif">',
           f"<title>patchwork-companion time-board template ({escape(board.game)})</title>",
           f'<rect class="board" x="0" y="0" width="{w:g}" height="{h:g}" fill="none" '
           'stroke="#888" stroke-width="0.3"/>']
    out += board_marks(board)
    out += _footer(board)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def led_side(board: Centres, x: float, y: float) -> tuple[float, float]:
    """The unit step from a centre towards its LED: away from the board's middle (the
    outer edge of the spiral), along the nearer axis; right for the middle itself."""
    dx, dy = x - board.width_mm / 2, y - board.height_mm / 2
    if abs(dx) >= abs(dy):
        return (1.0 if dx >= 0 else -1.0), 0.0
    return 0.0, (1.0 if dy > 0 else -1.0)


def led_hole(board: Centres, x: float, y: float) -> tuple[float, float]:
    """The centre of the LED hole of the space centred at (x, y), board mm."""
    sx, sy = led_side(board, x, y)
    return x + sx * LED_OFFSET_MM, y + sy * LED_OFFSET_MM


def board_marks(board: Centres) -> list[str]:
    """The SVG elements of every space (board mm): a centre point with a cross and the
    space's number, the breakout's square, the TO-92 pocket and the LED hole; one
    ``<g class="mark" data-space="n">`` each, its first circle at the centre."""
    half, (pw, pl, _) = MARK_RADIUS_MM, TO92_POCKET_MM
    out = []
    for space, (x, y) in enumerate(board.centres):
        lx, ly = led_hole(board, x, y)
        out.append(f'<g class="mark" data-space="{space}">'
                   f'<circle cx="{x:g}" cy="{y:g}" r="0.6" fill="black"/>'
                   f'<rect class="sensor" x="{x - half:g}" y="{y - half:g}" width="{2 * half:g}" '
                   f'height="{2 * half:g}" fill="none" stroke="black" stroke-width="0.3"/>'
                   f'<rect class="to92" x="{x - pw / 2:g}" y="{y - pl / 2:g}" width="{pw:g}" '
                   f'height="{pl:g}" fill="none" stroke="#555" stroke-width="0.2" '
                   'stroke-dasharray="0.8 0.6"/>'
                   f'<path d="M{x - 2.5:g} {y:g}H{x + 2.5:g}M{x:g} {y - 2.5:g}V{y + 2.5:g}" '
                   'stroke="black" stroke-width="0.2"/>'
                   f'<circle class="led" cx="{lx:g}" cy="{ly:g}" r="{LED_HOLE_MM / 2:g}" '
                   'fill="none" stroke="#c00" stroke-width="0.3"/>'
                   f'<text x="{x:g}" y="{y - half - 0.8:g}" font-size="3" '
                   f'text-anchor="middle">{space}</text></g>')
    return out


def too_close(board: Centres, spacing: float = SPACING_MM) -> list[tuple[int, int, float]]:
    """Pairs of spaces (i, j, distance mm) whose centres are closer than ``spacing``."""
    found = []
    for i, (x1, y1) in enumerate(board.centres):
        for j in range(i + 1, len(board.centres)):
            gap = math.hypot(board.centres[j][0] - x1, board.centres[j][1] - y1)
            if gap < spacing:
                found.append((i, j, round(gap, 1)))
    return found


def _footer(board: Centres) -> list[str]:
    y = board.height_mm + 6
    lines = [f'<path class="scale" d="M0 {y:g}H100" stroke="black" stroke-width="0.5"/>',
             f'<path d="M0 {y - 1.5:g}V{y + 1.5:g}M100 {y - 1.5:g}V{y + 1.5:g}" stroke="black" '
             'stroke-width="0.3"/>',
             f'<text x="50" y="{y - 1.5:g}" font-size="3" text-anchor="middle">100 mm: measure '
             'this after printing at 100 % (actual size)</text>']
    for k, note in enumerate(LEGEND):
        lines.append(f'<text class="legend" x="0" y="{y + 5 + 3 * k:g}" font-size="2.4">'
                     f'{escape(note)}</text>')
    y += 3 * len(LEGEND)
    if board.note:
        lines.append(f'<text x="0" y="{y + 6:g}" font-size="3">{escape(board.note)}</text>')
    if board.approximate:
        lines.append('<text class="approximate" x="0" y="-3.5" font-size="5" fill="red">'
                     'APPROXIMATE: not measured from your board</text>')
        lines.append(f'<text x="0" y="{y + 11:g}" font-size="3.5" fill="red">Measure your '
                     'space centres (hardware/mechanical.md) and make your own template '
                     'before drilling</text>')
    return lines


def pages(board: Centres, paper: str) -> list[str]:
    """The template tiled over ``paper`` ("a4" or "letter") pages at 1:1, one SVG text
    each, row by row (see :mod:`firmware_py.bench.template_pages`).

    Raises:
        ValueError: for an unknown paper name.
    """
    from . import template_pages as tp
    m = MARGIN_MM
    found = tp.tiles((-m, -m, board.width_mm + 2 * m, board.height_mm + 2 * m), paper)
    avoid = [*board.centres, *(led_hole(board, x, y) for x, y in board.centres)]
    marks = tp.alignment_marks(found, avoid)
    body = [f'<rect class="board" x="0" y="0" width="{board.width_mm:g}" '
            f'height="{board.height_mm:g}" fill="none" stroke="#888" stroke-width="0.3"/>',
            *board_marks(board)]
    notes = list(LEGEND)
    if board.approximate:
        notes.append("APPROXIMATE: not measured from your board; measure it before drilling")
    return [tp.page_svg(t, len(found), paper, body, marks, notes) for t in found]


def _write(files: list[tuple[Path, str]]) -> str | None:
    for path, text in files:
        try:
            path.write_text(text, "utf-8")
        except OSError as exc:
            return f"cannot write {path}: {exc.strerror or exc}"
    return None


def main(centres: str | None = None, out: str | None = None, *, paper: str = "a4",
         say=print) -> int:
    """The ``template`` command: 0 when the SVG was written (to ``out``, or stdout
    for None or "-"), 2 for a bad centres file or paper (the reason is printed).

    With a file ``out`` and ``paper`` "a4" or "letter" it also writes the pages
    that print the sheet at 1:1 (``STEM-PAPER-N.svg`` beside ``out``); "none"
    writes the single sheet only. Centres closer than :data:`SPACING_MM` are named.
    """
    try:
        board = load_centres(centres)
        sheets = [] if paper == "none" or out in (None, "-") else pages(board, paper)
    except (CentresError, ValueError) as exc:
        print(f"patchwork-companion template: {exc}", file=sys.stderr)
        return 2
    svg = render_svg(board)
    if out in (None, "-"):
        sys.stdout.write(svg)
        return 0
    target = Path(out)
    files = [(target, svg)] + [(target.with_name(f"{target.stem}-{paper}-{n}{target.suffix or '.svg'}"),
                                text) for n, text in enumerate(sheets, 1)]
    problem = _write(files)
    if problem:
        print(f"patchwork-companion template: {problem}", file=sys.stderr)
        return 2
    warning = " (APPROXIMATE centres: measure your board)" if board.approximate else ""
    say(f"wrote {out}: {len(board.centres)} spaces, {board.width_mm:g} x {board.height_mm:g} mm "
        f"at 1:1{warning}")
    if sheets:
        say(f"wrote {len(sheets)} {paper.upper() if paper == 'a4' else 'Letter'} pages: "
            f"{files[1][0].name} .. {files[-1][0].name}; print each at 100 % (actual size), "
            "check both 100 mm bars, overlap the pages on their circled crosses")
    for i, j, gap in too_close(board):
        say(f"warning: spaces {i} and {j} are {gap:g} mm apart, less than the {SPACING_MM:g} mm "
            "a token's magnet needs (hardware/mechanical.md): test that pair in the one-space test")
    return 0
