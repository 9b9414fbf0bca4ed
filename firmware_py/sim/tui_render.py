"""Pure drawing helpers of the interactive simulator (``patchwork-companion sim``).

No textual, no threads: images, LED frames and screens in, Rich ``Text`` out,
so every piece is a plain unit test.

- :func:`braille` draws the OLED's 128x64 frame as 16 rows of 64 braille
  characters (2x4 pixels per character), :func:`quadrants` as 32 rows of
  block characters (2x2 pixels each) for a terminal with room for it;
- :func:`board_text` draws the time board as rows of cells, each in the colour
  its LED shows, with the income spaces, the leather patches still on the board,
  the two physical time tokens and the hand's cursor marked;
- the OLED's words as text (:func:`caption`), the hint and status lines come
  from :mod:`.words` (no UI library), shared with the browser simulator.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from ..companion.model import GREEN, YELLOW, Screen
from .words import (HandView, caption, caption_parts, display_rgb, hint,  # noqa: F401
                    link_text, status_line)

OLED_W, OLED_H = 128, 64
BRAILLE_COLS, BRAILLE_ROWS = OLED_W // 2, OLED_H // 4
# bit of each dot in a braille cell, by (dx, dy)
_DOTS = ((0, 0, 0x01), (0, 1, 0x02), (0, 2, 0x04), (1, 0, 0x08),
         (1, 1, 0x10), (1, 2, 0x20), (0, 3, 0x40), (1, 3, 0x80))
OLED_STYLE = Style(color="#dff3ff", bgcolor="#000000")

TOKEN_STYLE = {GREEN: Style(color="#000000", bgcolor="#3ee63e", bold=True),
               YELLOW: Style(color="#000000", bgcolor="#ffd21f", bold=True)}
TOKEN_LETTER = {GREEN: "G", YELLOW: "Y"}
INCOME_MARK = "$"        # an income space (buttons printed on the board)
LEATHER_MARK = "L"       # a leather patch still lying on the space
OFF_SHADES = ("#1c1c1c", "#2a2a2a")   # dark cells alternate so neighbours stay apart
MAX_CELL_W = 8


def braille(image) -> list[str]:
    """The 128x64 mode "1" ``image`` as 16 strings of 64 braille characters."""
    if image.size != (OLED_W, OLED_H):
        raise ValueError(f"OLED frame must be {OLED_W}x{OLED_H}, got {image.size}")
    data = image.convert("L").tobytes()
    rows = []
    for row in range(BRAILLE_ROWS):
        chars = []
        for col in range(BRAILLE_COLS):
            bits = 0
            for dx, dy, bit in _DOTS:
                if data[(row * 4 + dy) * OLED_W + col * 2 + dx]:
                    bits |= bit
            chars.append(chr(0x2800 + bits))
        rows.append("".join(chars))
    return rows


# block characters by lit quarters: top-left 1, top-right 2, bottom-left 4, bottom-right 8
_QUADRANTS = " \u2598\u259d\u2580\u2596\u258c\u259e\u259b\u2597\u259a\u2590\u259c\u2584\u2599\u259f\u2588"
QUAD_COLS, QUAD_ROWS = OLED_W // 2, OLED_H // 2


def quadrants(image) -> list[str]:
    """The 128x64 mode "1" ``image`` as 32 strings of 64 block characters
    (2x2 pixels per character, so each pixel is a solid square quarter: twice
    the height of :func:`braille` and much easier to read)."""
    if image.size != (OLED_W, OLED_H):
        raise ValueError(f"OLED frame must be {OLED_W}x{OLED_H}, got {image.size}")
    data = image.convert("L").tobytes()
    rows = []
    for row in range(QUAD_ROWS):
        top, low = (row * 2) * OLED_W, (row * 2 + 1) * OLED_W
        rows.append("".join(
            _QUADRANTS[(data[top + x] > 0) | (data[top + x + 1] > 0) << 1
                       | (data[low + x] > 0) << 2 | (data[low + x + 1] > 0) << 3]
            for x in range(0, OLED_W, 2)))
    return rows


def oled_text(image, big: bool = False) -> Text:
    """The OLED frame as Rich text (light on black): braille dots (16 rows), or
    block quarters (32 rows) when ``big``; a dark panel when ``image`` is None."""
    if image is None:
        lines = [" " * BRAILLE_COLS] * (QUAD_ROWS if big else BRAILLE_ROWS)
    else:
        lines = quadrants(image) if big else braille(image)
    return Text("\n".join(lines), style=OLED_STYLE, no_wrap=True, end="")


# --------------------------------------------------------------------- the board
def _hex(rgb) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _ink(rgb) -> str:
    """Black text on a bright cell, white on a dark one."""
    r, g, b = rgb
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 110 else "#f0f0f0"


@dataclass(frozen=True)
class BoardView:
    """What the board widget draws.

    ``last_space``: 53 or 29; ``colours``: the LED colour of each space
    (space index -> (r, g, b)); ``income``/``leather``: marked spaces;
    ``tokens``: colour -> space of each physical token on the board;
    ``held``: the colour of a token in the hand (lifted) or "", hovering over
    ``cursor``; ``hand``: the colour of the token the arrow keys move.
    """

    last_space: int
    colours: tuple[tuple[int, int, int], ...]
    income: frozenset[int] = frozenset()
    leather: frozenset[int] = frozenset()
    tokens: tuple[tuple[str, int], ...] = ()
    held: str = ""
    cursor: int | None = None
    hand: str = ""


def board_shape(spaces: int, width: int, height: int) -> tuple[int, int, int]:
    """(cells per row, cell width, cell height in lines) for ``spaces`` cells in
    ``width`` x ``height`` characters: the biggest cells that fit (5..8 wide,
    1..3 lines, the third a gap between rows), fewer rows on a tie."""
    best = None
    for rows in range(1, spaces + 1):
        per_row = math.ceil(spaces / rows)
        cell_w = min(MAX_CELL_W, width // per_row)
        cell_h = min(3, height // rows)
        if cell_w < 5 or cell_h < 1:
            continue
        if best is None or cell_w * cell_h > best[1] * best[2]:
            best = (per_row, cell_w, cell_h)
    return best or (max(1, width // 5), 5, 1)


def board_text(view: BoardView, width: int, height: int) -> Text:
    """The board as rows of cells in ``width`` x ``height`` characters.

    A cell shows the space number, ``$`` on an income space, ``L`` where a
    leather patch still lies, and a chip per physical token (``G``/``Y`` in the
    token's colour); its background is the LED colour under that space. A
    lifted token is drawn as a chip over the cursor's cell, underlined.
    Cells are one line ("12$GY"), or two ("12 $" over "G Y") when there is room.
    """
    spaces = view.last_space + 1
    per_row, cell_w, cell_h = board_shape(spaces, width, height)
    margin = " " * max(0, (width - per_row * cell_w) // 2)
    out = Text(no_wrap=True, end="")
    for first in range(0, spaces, per_row):
        cells = range(first, min(spaces, first + per_row))
        for line in range(cell_h):
            if first or line:
                out.append("\n")
            if line == 2:
                continue                      # the gap between rows
            out.append(margin)
            for space in cells:
                _cell(out, view, space, cell_w, 0 if cell_h == 1 else line + 1)
    return out


def _cell(out: Text, view: BoardView, space: int, cell_w: int, part: int) -> None:
    """One line of a cell: ``part`` 0 = the whole cell on one line, 1/2 = top/bottom."""
    rgb = view.colours[space] if space < len(view.colours) else (0, 0, 0)
    shown = display_rgb(rgb)
    bg = OFF_SHADES[space % 2] if shown == (0, 0, 0) else _hex(shown)
    base = Style(color=_ink(shown) if shown != (0, 0, 0) else "#d0d0d0", bgcolor=bg)
    under = view.cursor == space and bool(view.held)
    label = Text(f"{space:>2}", style=base + Style(underline=under, bold=under))
    mark = INCOME_MARK if space in view.income else LEATHER_MARK if space in view.leather else " "
    chips = _chips(view, space, base)
    gap = cell_w >= 7                         # wide cells keep a dark column between them
    room = cell_w - gap
    if part == 0:
        body = label + Text(mark, style=base + Style(bold=True)) + chips
    elif part == 1:
        body = Text(" ", style=base) + label + Text(f" {mark}", style=base + Style(bold=True))
    else:
        body = Text(" ", style=base) + _spread(chips, base)
    out.append_text(_pad(body, room, base))
    if gap:
        out.append(" ")


def _spread(chips: Text, base: Style) -> Text:
    """"GY" as "G Y" (two-line cells have room between the chips)."""
    return chips[:1] + Text(" ", style=base) + chips[1:]


def _chips(view: BoardView, space: int, base: Style) -> Text:
    chips = Text()
    here = {name for name, at in view.tokens if at == space}
    for name in (GREEN, YELLOW):
        if name in here:
            chips.append(TOKEN_LETTER[name], style=TOKEN_STYLE[name])
        elif name == view.held and view.cursor == space:
            chips.append(TOKEN_LETTER[name].lower(), style=TOKEN_STYLE[name] + Style(underline=True))
        else:
            chips.append(" ", style=base)
    return chips


def _pad(text: Text, width: int, style: Style) -> Text:
    text = text.copy()
    if len(text) < width:
        text.append(" " * (width - len(text)), style=style)
    text.truncate(width)
    return text


HELP = """\
 HOW TO PLAY AT THE SIMULATED TABLE                  (any key closes this)
 OLED    the companion's display (braille dots; blocks in a big terminal);
         its words are repeated as text in the frame's title and bottom line.
 BOARD   each space lit like the LED under it: green/yellow where a token
         belongs (pulsing: whose turn), white where the chosen move ends,
         blinking white/red: a token must go there / leave. $ income space,
         L leather patch. G and Y: the real tokens, where your hand put them.
 BUTTONS n NEXT, o or Enter OK, b or Backspace BACK. A capital holds the
         button: O opens the menu (undo, 7x7 tile, buttons, end), B undoes.
 A TURN  Move the token of the player to move: the arrows slide it and the
         move counts once you stop; the companion works out which move it
         was (press o when it asks). Or choose first: n cycles the patches
         on offer (1b/2t: costs 1 button, takes 2 spaces) and advance, o
         picks it; then slide the token to the space lit white. The OLED
         says what to pay or take: buttons, income, leather patches.
 THE BOX Setup "Who plays?" -> Box: you are green. Its turn: the OLED shows
         its patch and where it goes on its quilt; slide the yellow token to
         the space lit white. On your turn b shows its last move again.
 TOKENS  Your hand holds the mover's token; g / y take the other one.
         l lifts it, the arrows aim (up/down a row, Home/End), d or Space
         sets it down. r stands both tokens where the game says they are.
 SENSOR  U pulls the sensor's USB cable out (and plugs it back in).
 QUIT    q. The journal keeps the game; the next start resumes it."""


def history_entry(turns: int, before: int, mover: str, screen: Screen) -> str:
    """One line of the turn history when the turn count goes from ``before`` to
    ``turns``: who moved and what the OLED told them, or an undo."""
    if turns < before:
        return f"{turns:>3}  undone: back to turn {turns}"
    said = (screen.notice or " ".join(screen.lines)) if screen.kind in ("turn", "prompt") else ""
    who = mover.capitalize() if mover else "?"
    return f"{turns:>3}  {who}: {said or 'moved'}"
