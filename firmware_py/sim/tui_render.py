"""Pure drawing helpers of the interactive simulator (``patchwork-companion sim``).

No textual, no threads: images, LED frames and screens in, Rich ``Text`` out,
so every piece is a plain unit test.

- :func:`braille` draws the OLED's 128x64 frame as 16 rows of 64 braille
  characters (2x4 pixels per character), :func:`quadrants` as 32 rows of
  block characters (2x2 pixels each) for a terminal with room for it;
- :func:`board_text` draws the time board as rows of cells, each in the colour
  its LED shows, with the income spaces, the leather patches still on the board,
  the two physical time tokens and the hand's cursor marked;
- :func:`caption` turns the OLED's :class:`~firmware_py.companion.model.Screen`
  into two short lines of plain text (the box's title and subtitle), so that
  the words on the OLED can also be read (and searched) as text.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from ..companion.model import GREEN, YELLOW, Screen

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
def display_rgb(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """An LED colour as it looks on a board: dim LEDs (the income blue, the
    leather orange, a pulse at 25%) are lifted so that a screen shows them."""
    return tuple(round(255 * math.sqrt(c / 255)) for c in rgb)  # type: ignore[return-value]


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


# ------------------------------------------------------------------- the caption
def caption(screen: Screen | None) -> tuple[str, str]:
    """(title, subtitle): the OLED's words as plain text, e.g. ("Green to move
    @12", "pay 3 buttons, move to space 14") or ("CHECK THE BOARD", "green
    token back on 12")."""
    if screen is None:
        return "OLED", ""
    title, sub = _CAPTIONS.get(screen.kind, _cap_prompt)(screen)
    if screen.warning:
        title = f"{title} [{screen.warning}]"
    return title, sub


def caption_parts(text: str, width: int) -> list[str]:
    """``text`` in parts of at most ``width`` characters, shown in turn when the
    whole does not fit a frame's border line ([text] when it fits). Parts end
    after ";", ".", ",", "?" or before "(" where they can (a phrase longer
    than ``width`` is split at spaces), and a part that goes on with "Green:
    ..." starts with "Green:" again, so that every part says whose it is (unless
    it names its own subject: "BACK: the box's move again" stays as it is)."""
    if len(text) <= width:
        return [text]
    lead = re.match(r"(Green|Yellow): ", text)
    head = lead.group(0) if lead else ""
    parts: list[str] = []
    for phrase in re.split(r"(?<=[;.,?]) +| +(?=\()", text):
        if parts and len(parts[-1]) + 1 + len(phrase) <= width:
            parts[-1] += " " + phrase
        elif len(head + phrase) <= width:
            fresh = parts and head and not re.match(r"\S+: ", phrase)   # "BACK: ..." is not Green's
            parts.append(head + phrase if fresh else phrase)
        else:
            for word in phrase.split():
                if parts and len(parts[-1]) + 1 + len(word) <= width:
                    parts[-1] += " " + word
                else:
                    parts.append(word)
    return parts


def _cap_choose(s: Screen) -> tuple[str, str]:
    chosen = s.options[s.selected] if 0 <= s.selected < len(s.options) else ""
    return s.title, f"> {chosen}   ({s.footer})" if s.footer else f"> {chosen}"


def _cap_deal(s: Screen) -> tuple[str, str]:
    card = s.patches[0] if s.patches else None
    if card is None:
        return s.title, ""
    return (f"{s.title} {card.index}/{card.total}",
            f"cost {card.cost}, time {card.time}, income {card.income}   ({s.footer})")


def _cap_turn(s: Screen) -> tuple[str, str]:
    active = next((p for p in s.players if p.active), None)
    title = f"{active.name} to move @{active.position}" if active else s.title
    if s.notice:
        return title, s.notice
    chosen = next((c for c in s.patches if c.selected), None)
    if chosen is not None:
        which = f"{chosen.index} of {chosen.total}" if chosen.total else "chosen"
        grey = "" if chosen.buyable else " (can't buy)"
        return title, (f"{which}: cost {chosen.cost}, time {chosen.time}, "
                       f"income {chosen.income}{grey}")
    if not s.patches and s.lines:
        return title, " ".join(s.lines)
    players = "  ".join(f"{p.name} {p.buttons}b" for p in s.players)
    offer = " ".join(_price(c) for c in s.patches)
    return title, f"{players}  offer {offer}" if offer else players


def _price(card) -> str:
    """"2b/3t" (cost in buttons, time), "+1" for income; "(x)" when not buyable."""
    text = f"{card.cost}b/{card.time}t" + (f"+{card.income}" if card.income else "")
    return text if card.buyable else f"({text})"


def _cap_prompt(s: Screen) -> tuple[str, str]:
    parts = [" ".join(s.lines)] if s.lines else []
    if s.options:
        count = f" ({s.selected + 1} of {len(s.options)})" if len(s.options) > 1 else ""
        parts.append(f"> {s.options[s.selected]}{count}")
    if s.footer:
        parts.append(f"({s.footer})")
    return s.title, "  ".join(parts)


def _cap_mismatch(s: Screen) -> tuple[str, str]:
    return "CHECK THE BOARD", " ".join(s.lines)


def _cap_end(s: Screen) -> tuple[str, str]:
    rows = []
    for p in s.players:
        bonus = p.score - p.buttons + 2 * p.empty
        tile = f"+{bonus}" if bonus else ""
        rows.append(f"{p.name} {p.buttons}{tile}-2x{p.empty}={p.score}")
    said = "".join(f". {line.rstrip('.')}" for line in s.lines) + ("." if s.lines else "")
    return s.title, "tally: " + "  ".join(rows) + said


def _cap_box(s: Screen) -> tuple[str, str]:
    """The box's turn: what it takes and every step to carry out, e.g. ("Box: 2nd patch",
    "pay 3 buttons, Yellow to 14, +1 income; its quilt: see the OLED")."""
    said = s.notice or ", ".join(s.lines)
    if s.quilt is not None:
        said += "; its quilt: see the OLED"
    return s.title, said


_CAPTIONS = {"choose": _cap_choose, "deal": _cap_deal, "turn": _cap_turn, "prompt": _cap_prompt,
             "mismatch": _cap_mismatch, "end": _cap_end, "box": _cap_box}


# ------------------------------------------------------------ hint and status lines
@dataclass(frozen=True)
class HandView:
    """The hand as the hint line needs it: ``hand`` (the token the arrows move),
    ``held`` (the token in the air, or ""), ``cursor`` (where it hovers)."""

    hand: str
    held: str = ""
    cursor: int = 0


_SETUP_HINT = "Setup: n moves the OLED cursor, o (Enter) chooses, b goes back.  ? = help"
_MODE_HINTS = {
    "deal": "Lay out clockwise as shown: n next patch, b previous; on the last, o starts.",
    "confirm": "Which move did you make? o = yes, n = the other choice, b = no (move it back).",
    "leather": "Leather patch: o places it on your quilt, n sets it aside.",
    "menu": "Menu: n next entry, o does it, b closes the menu.",
    "claim": "Who completed a 7x7 square? n switches, o chooses, b cancels.",
    "correct_who": "Whose buttons to correct? n switches, o chooses, b cancels.",
    "correct_amount": "n adds a button, b takes one away, o sets the count.",
    "end_confirm": "End the game now? n switches, o chooses.",
    "end": "Game over: o starts a new game, B (hold BACK) undoes the last turn.",
    "box_review": "The box's last turn again: any button goes back.",
    "hint": "What the box would play: any button goes back.",
}


def hint(mode: str, kind: str, active: str, hand: HandView, target: int | None = None) -> str:
    """One line telling a newcomer what to do now (``mode``: the UI mode,
    ``kind``: the screen kind, ``active``: the colour to move or "",
    ``target``: the space lit white for the chosen move, if any)."""
    if hand.held:
        return (f"{hand.held.capitalize()} token in the air over {hand.cursor}: "
                "arrows aim, d (or Space) sets it down.")
    if kind == "mismatch":
        return "The board disagrees: put the tokens on the blinking white spaces (r tidies up)."
    if mode.startswith("setup"):
        return _SETUP_HINT
    if mode in _MODE_HINTS:
        return _MODE_HINTS[mode]
    if mode == "turn" and active:
        return _turn_hint(active, hand, target)
    if mode == "box" and active:
        return _box_hint(active, hand, target)
    return "n NEXT, o OK, b BACK; hold with N, O (menu), B (undo).  ? = help"


def _box_hint(active: str, hand: HandView, target: int | None) -> str:
    """The box's turn: you carry it out with its token (``active``'s colour)."""
    if target is None:
        return "The box is thinking; its move will show on the OLED."
    if hand.hand != active:
        return (f"Box's turn: do what the OLED says, then move its {active} token to {target} "
                f"(press {active[0]} to take it).")
    return (f"Box's turn: its patch and buttons as the OLED says, then its {active} token "
            f"to {target} (lit white).")


def _turn_hint(active: str, hand: HandView, target: int | None) -> str:
    mover = active.capitalize()
    if hand.hand != active:
        return (f"{mover} to move, but your hand holds the {hand.hand} token "
                f"(press {active[0]} to take {active}'s).")
    if target is not None:
        return f"{mover}: slide the {active} token to {target} (lit white); n: another choice."
    return f"{mover}: move the {active} token (arrows slide, l lifts) or choose with n, o."


def status_line(link: str, warnings: tuple[str, ...], turns: int, folder: str, width: int) -> str:
    """The bottom line: the sensor link, warnings, the journal folder and turn count,
    cut to ``width`` (the folder loses its start first)."""
    head = f"sensor {link}" + (f" ! {' / '.join(warnings)}" if warnings else "")
    tail = f" | {turns} turns | journal "
    room = max(8, width - len(head) - len(tail))
    shown = folder if len(folder) <= room else "\u2026" + folder[-(room - 1):]
    return (head + tail + shown)[:width]


def link_text(stats) -> str:
    """Short text for the sensor link's :class:`~firmware_py.hw.sensor_link.LinkStats`."""
    if stats is None:
        return "none"
    bad = stats.crc_errors + stats.malformed + stats.garbage_lines + stats.overlong
    return f"{stats.state} {stats.frames_ok} frames {bad} bad {stats.gaps} gaps"


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
