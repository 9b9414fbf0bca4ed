"""``patchwork-companion template``: a printable 1:1 drilling template of the time board.

It reads a *centres file* (TOML) holding the centre of every time-board space
as measured on the maker's own board, and writes an SVG whose user unit is
one millimetre and whose width and height are given in ``mm``, so a browser
or vector program printing at 100 % ("actual size") gives a sheet to tape
under the board: one numbered mark per space, where its hall sensor (and
its LED) goes. A 100 mm scale bar checks the print. The centres file::

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
MARK_RADIUS_MM = 4.0      #: a circle the size of a TO-92 or SOT-23 breakout's sensor area
MIN_APART_MM = 5.0        #: two centres closer than this are taken for a typo
DEFAULT = Path(__file__).with_name("data") / "time-board-centres.toml"


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
    tall = h + 2 * m + 16
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + 2 * m:g}mm" '
           f'height="{tall:g}mm" viewBox="{-m:g} {-m:g} {w + 2 * m:g} {tall:g}" '
           'font-family="sans-serif">',
           f"<title>patchwork-companion time-board template ({escape(board.game)})</title>",
           f'<rect class="board" x="0" y="0" width="{w:g}" height="{h:g}" fill="none" '
           'stroke="#888" stroke-width="0.3"/>']
    for space, (x, y) in enumerate(board.centres):
        out.append(f'<g class="mark" data-space="{space}">'
                   f'<circle cx="{x:g}" cy="{y:g}" r="{MARK_RADIUS_MM:g}" fill="none" '
                   'stroke="black" stroke-width="0.3"/>'
                   f'<path d="M{x - 1.5:g} {y:g}H{x + 1.5:g}M{x:g} {y - 1.5:g}V{y + 1.5:g}" '
                   'stroke="black" stroke-width="0.2"/>'
                   f'<text x="{x:g}" y="{y - MARK_RADIUS_MM - 0.8:g}" font-size="3" '
                   f'text-anchor="middle">{space}</text></g>')
    out += _footer(board)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _footer(board: Centres) -> list[str]:
    y = board.height_mm + 6
    lines = [f'<path class="scale" d="M0 {y:g}H100" stroke="black" stroke-width="0.5"/>',
             f'<path d="M0 {y - 1.5:g}V{y + 1.5:g}M100 {y - 1.5:g}V{y + 1.5:g}" stroke="black" '
             'stroke-width="0.3"/>',
             f'<text x="50" y="{y - 1.5:g}" font-size="3" text-anchor="middle">100 mm: measure '
             'this after printing at 100 % (actual size)</text>']
    if board.note:
        lines.append(f'<text x="0" y="{y + 6:g}" font-size="3">{escape(board.note)}</text>')
    if board.approximate:
        lines.append('<text class="approximate" x="0" y="-3.5" font-size="5" fill="red">'
                     'APPROXIMATE: not measured from your board</text>')
        lines.append(f'<text x="0" y="{y + 11:g}" font-size="3.5" fill="red">Measure your '
                     'space centres (hardware/mechanical.md) and make your own template '
                     'before drilling</text>')
    return lines


def main(centres: str | None = None, out: str | None = None, *, say=print) -> int:
    """The ``template`` command: 0 when the SVG was written (to ``out``, or stdout
    for None or "-"), 2 for a bad centres file (the reason is printed)."""
    try:
        board = load_centres(centres)
    except CentresError as exc:
        print(f"patchwork-companion template: {exc}", file=sys.stderr)
        return 2
    svg = render_svg(board)
    if out in (None, "-"):
        sys.stdout.write(svg)
        return 0
    try:
        Path(out).write_text(svg, "utf-8")
    except OSError as exc:
        print(f"patchwork-companion template: cannot write {out}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    warning = " (APPROXIMATE centres: measure your board)" if board.approximate else ""
    say(f"wrote {out}: {len(board.centres)} spaces, {board.width_mm:g} x {board.height_mm:g} mm "
        f"at 1:1{warning}; print at 100 % and check the 100 mm bar")
    return 0
