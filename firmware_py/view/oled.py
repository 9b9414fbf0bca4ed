"""The OLED renderer: a :class:`~firmware_py.companion.model.Screen` in, a
128x64 mode "1" image out. Pure: no clock, no I/O, the same screen always gives
the same pixels (the golden images in ``tests/golden`` pin them).

Every screen has the same frame: an inverted title bar (rows 0..9) whose right
end carries the ``warning`` tag (white text in a black box) when one is set,
a body, and the ``footer`` legend in small capitals on the bottom rows
(59..63) when one is set. Text that does not fit in the big font is drawn in
the small one, and cut with an ellipsis if it still does not fit.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from PIL import Image, ImageDraw

from ..companion.model import PatchCard, PlayerLine, Screen
from .fonts import ARROW, BIG, BUTTON, DOWN, HOURGLASS, THIN, TINY, UP
from .patch_art import cell_size, draw_label, draw_patch, label_width

WIDTH, HEIGHT = 128, 64
LINE = BIG.line        # 10 px per big text line
HEADER = 10            # the title bar: rows 0..9
FOOTER_Y = 59          # the legend: rows 59..63
PICTURE_W = 40         # the "Which move?" picture column at the right
TAG_MAX = 64           # widest warning tag in px
TAG_MIN = 40           # the tag may squeeze the title down to this
ON = 255               # a lit pixel in a mode "1" image

Draw = ImageDraw.ImageDraw


def render(screen: Screen) -> Image.Image:
    """Draw ``screen`` as a 128x64 mode "1" image (lit pixels 255, dark 0).

    Raises ValueError for an unknown ``screen.kind``.
    """
    try:
        painter = _PAINTERS[screen.kind]
    except KeyError:
        raise ValueError(f"unknown screen kind {screen.kind!r}; expected one of "
                         f"{', '.join(sorted(_PAINTERS))}") from None
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    painter(ImageDraw.Draw(image), screen)
    return image


# --- the six screens -------------------------------------------------------

def _choose(draw: Draw, screen: Screen) -> None:
    """A setup or menu question: ``title`` in the bar, the ``options`` as a
    list with the cursor (an inverted row with an arrow) on ``selected``,
    scrolled to keep it visible (arrows at the right mark more rows), and the
    ``footer`` legend."""
    _header(draw, [screen.title], screen.warning)
    bottom = _footer(draw, screen.footer)
    _menu(draw, HEADER + 1, bottom, screen.options, screen.selected)


def _prompt(draw: Draw, screen: Screen) -> None:
    """A question during play: ``title`` in the bar, the ``lines`` of text,
    then the ``options`` with the cursor on ``selected`` (at least two option
    rows are kept when there are options), and the ``footer`` legend. When
    ``patches`` are given (the "Which move?" question), the selected one's
    picture stands in a column at the right and the text keeps to the left."""
    _header(draw, [screen.title], screen.warning)
    bottom = _footer(draw, screen.footer)
    picture = next((c for c in screen.patches if c.selected), None)
    right = WIDTH - PICTURE_W if screen.patches else WIDTH
    if picture is not None:
        draw_patch(draw, (right + 2, HEADER + 2, PICTURE_W - 3, bottom - HEADER - 3),
                   picture.shape, max_cell=6)
    rows = (bottom - HEADER - 1) // LINE
    text_rows = min(len(screen.lines), max(0, rows - min(len(screen.options), 2)))
    y = _lines(draw, HEADER + 1, screen.lines[:text_rows], right)
    _menu(draw, y, bottom, screen.options, screen.selected, right)


def _mismatch(draw: Draw, screen: Screen) -> None:
    """Board and game disagree: an attention bar "! CHECK THE BOARD !", the
    ``lines`` saying what to fix (as many as fit), and the ``footer``."""
    _header(draw, ["! CHECK THE BOARD !", "CHECK THE BOARD", "CHECK BOARD"],
            screen.warning)
    bottom = _footer(draw, screen.footer)
    rows = (bottom - HEADER - 1) // LINE
    _lines(draw, HEADER + 1, screen.lines[:rows])


def _deal(draw: Draw, screen: Screen) -> None:
    """One patch of the dealt circle (``patches[0]``): "Lay out 7/33" in the
    bar (``title`` replaces "Lay out"), a big picture on the left and its
    cost, time and income on the right, and the ``footer``."""
    card = screen.patches[0] if screen.patches else None
    count = f" {card.index}/{card.total}" if card and card.total else ""
    _header(draw, [f"{screen.title or 'Lay out'}{count}", f"Deal{count}", count.strip()],
            screen.warning)
    bottom = _footer(draw, screen.footer)
    if card is None:
        _lines(draw, HEADER + 1, ("no patch",))
        return
    draw_patch(draw, (1, HEADER + 2, 68, bottom - HEADER - 3), card.shape,
               grey=not card.buyable)
    for i, text in enumerate((f"cost {card.cost}{BUTTON}", f"time {card.time}{HOURGLASS}",
                              f"income {card.income}")):
        _text(draw, 72, HEADER + 3 + i * (LINE + 2), text, WIDTH - 72)


def _turn(draw: Draw, screen: Screen) -> None:
    """Whose turn: the bar names the active player and their space
    ("Green to move @12"); one row per player (arrow on the active one):
    name, buttons, income ("+3") and the score as it stands ("-150pt"); the
    offer as three pictures across the bottom with cost, time and income
    under each (the selected one framed with an inverted label, unbuyable
    ones dithered). A ``notice`` replaces the player rows with a framed
    banner (a two-line notice takes a few rows from the pictures)."""
    active = next((p for p in screen.players if p.active), None)
    _header(draw, _turn_titles(active), screen.warning)
    bottom = _footer(draw, screen.footer)
    if screen.notice:
        top = _banner(draw, HEADER, screen.notice)
    else:
        top = HEADER + 2 * LINE
        for i, player in enumerate(screen.players[:2]):
            _player_row(draw, HEADER + i * LINE, player)
    cards = screen.patches[:3]
    _, _, pic_w, pic_h = _picture_box((0, top, 42, bottom - top))
    size = min((cell_size(c.shape, pic_w, pic_h, max_cell=6) for c in cards), default=0)
    for i, card in enumerate(cards):
        _offer_card(draw, (i * 43, top, 42, bottom - top), card, size)
    if not screen.patches:
        _text(draw, 2, top + 3, "no patches left", WIDTH - 4)


def _end(draw: Draw, screen: Screen) -> None:
    """The final tally: the winner in the bar (``title``, else "<name> wins"
    from the best score), a legend "BUTTONS+TILE-2xEMPTY=SCORE" and one row
    per player "25+7-2x4=24" (the tile column only when a player has the
    special tile; arrow on the best score), then the ``lines`` (e.g. the
    tie-break) and the ``footer``."""
    best = max(screen.players, key=lambda p: p.score, default=None)
    tied = sum(p.score == best.score for p in screen.players) > 1 if best else False
    title = screen.title or (f"{_name(best)} wins" if best and not tied else "Game over")
    _header(draw, [title], screen.warning)
    bottom = _footer(draw, screen.footer)
    tile = any(p.special for p in screen.players)
    TINY.draw(draw, (1, HEADER + 2), "BUTTONS+TILE-2xEMPTY=SCORE" if tile
              else "BUTTONS-2xEMPTY=SCORE")
    y = HEADER + 8
    for player in screen.players[:2]:
        _tally_row(draw, y, player, tile, not tied and player is best)
        y += LINE
    rows = max(0, (bottom - y - 1) // LINE)
    _lines(draw, y + 1, screen.lines[:rows])


_PAINTERS: dict[str, Callable[[Draw, Screen], None]] = {
    "choose": _choose, "deal": _deal, "turn": _turn, "prompt": _prompt,
    "mismatch": _mismatch, "end": _end}


# --- pieces ----------------------------------------------------------------

def _header(draw: Draw, titles: Sequence[str], warning: str) -> None:
    """The inverted bar: the warning tag at the right (cut so that the
    shortest of ``titles`` still fits, but never below ``TAG_MIN`` px), then
    the first of ``titles`` that fits beside it (the last one cut otherwise)."""
    draw.rectangle((0, 0, WIDTH - 1, HEADER - 1), fill=ON)
    shortest = min(BIG.width(t) for t in titles)
    room = _tag(draw, warning, max(TAG_MIN, WIDTH - 3 - shortest)) - 3
    title = next((t for t in titles if BIG.width(t) <= room), None)
    BIG.draw(draw, (2, 0), title if title is not None else BIG.fit(titles[-1], room), fill=0)


def _tag(draw: Draw, warning: str, max_width: int) -> int:
    """Draw ``warning`` as a black tag, at most ``max_width`` px wide, at the
    right end of the bar; return its left edge (``WIDTH`` without a warning)."""
    if not warning:
        return WIDTH
    text = TINY.fit(warning, min(TAG_MAX, max_width) - 1)
    left = WIDTH - 1 - TINY.width(text)
    draw.rectangle((left, 1, WIDTH - 1, HEADER - 2), fill=0)
    TINY.draw(draw, (left + 1, 2), text, fill=1)
    return left


def _footer(draw: Draw, text: str) -> int:
    """Draw the legend in small capitals; return the body's bottom (exclusive)."""
    if not text:
        return HEIGHT
    TINY.draw(draw, (1, FOOTER_Y), TINY.fit(text, WIDTH - 1))
    return FOOTER_Y - 1


def _text(draw: Draw, x: int, y: int, text: str, width: int, fill: int = 1) -> None:
    """One line of text in ``width`` px: big if it fits, else small capitals,
    else big cut with an ellipsis."""
    if BIG.width(text) <= width or TINY.width(text) > width + 1:
        BIG.draw(draw, (x, y), BIG.fit(text, width), fill)
    else:
        TINY.draw(draw, (x, y + BIG.top + 1), text, fill)


def _lines(draw: Draw, top: int, lines: Sequence[str], right: int = WIDTH) -> int:
    """Text rows from ``top`` left of x = ``right``; returns the y below the last."""
    for i, line in enumerate(lines):
        _text(draw, 1, top + i * LINE, line, right - 2)
    return top + len(lines) * LINE


def _menu(draw: Draw, top: int, bottom: int, options: Sequence[str], selected: int,
          right: int = WIDTH) -> None:
    """Options one per row between ``top`` and ``bottom`` left of x = ``right``, scrolled
    so the ``selected`` one is visible; it is inverted and marked with an arrow."""
    rows = max(1, (bottom - top) // LINE)
    start = max(0, min(selected - rows // 2, len(options) - rows))
    more = len(options) > rows
    width = right - 8 - (7 if more else 0)
    for i, option in enumerate(options[start:start + rows]):
        y, chosen = top + i * LINE, start + i == selected
        if chosen:
            draw.rectangle((0, y, right - 1, y + LINE - 1), fill=ON)
            BIG.draw(draw, (1, y), ARROW, fill=0)
        _text(draw, 7, y, option, width, fill=0 if chosen else 1)
    if more:
        _scroll_marks(draw, top, top + rows * LINE, start > 0, start + rows < len(options), right)


def _scroll_marks(draw: Draw, top: int, bottom: int, up: bool, down: bool,
                  right: int = WIDTH) -> None:
    """Up/down arrows in a black strip at the right edge (x = ``right``)."""
    for show, icon, y in ((up, UP, top), (down, DOWN, bottom - LINE)):
        if show:
            draw.rectangle((right - 7, y, right - 1, y + LINE - 1), fill=0)
            BIG.draw(draw, (right - 6, y), icon)


def _name(player: PlayerLine) -> str:
    return player.name or player.colour.capitalize()


def _turn_titles(active: PlayerLine | None) -> list[str]:
    if active is None:
        return ["Patchwork"]
    name = _name(active)
    return [f"{name} to move @{active.position}", f"{name} @{active.position}",
            f"@{active.position} {name}"]


def _player_row(draw: Draw, y: int, player: PlayerLine) -> None:
    """"> Green  12(b)  +3  -150pt": arrow when active, name, buttons,
    income, score, numbers right-aligned in columns."""
    if player.active:
        BIG.draw(draw, (0, y), ARROW)
    BIG.draw(draw, (6, y), BIG.fit(_name(player), 36))
    _right(draw, 67, y, f"{player.buttons}{BUTTON}")
    _right(draw, 88, y, f"+{player.income}")
    _right(draw, WIDTH - 1, y, f"{player.score}pt")


def _right(draw: Draw, right: int, y: int, text: str) -> None:
    """Big text whose last lit column is ``right`` - 1."""
    BIG.draw(draw, (right - BIG.width(text) + 1, y), text)


def _picture_box(box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """Where an offer card's picture goes inside the card ``box``."""
    left, top, width, height = box
    return left + 2, top + 1, width - 4, height - LINE - 3


def _offer_card(draw: Draw, box: tuple[int, int, int, int], card: PatchCard, size: int) -> None:
    """One patch on offer in ``box`` (left, top, width, height): the picture
    (squares of ``size`` px) above, the price label at the bottom; framed with
    an inverted label when selected, dithered when not buyable."""
    left, top, width, height = box
    label_y = top + height - 1 - LINE
    draw_patch(draw, _picture_box(box), card.shape, grey=not card.buyable, max_cell=size)
    ink = 1
    if card.selected:
        draw.rectangle((left, top, left + width - 1, top + height - 1), outline=ON)
        draw.rectangle((left, label_y, left + width - 1, top + height - 1), fill=ON)
        ink = 0
    shown = label_width(card.cost, card.time, card.income)
    if shown > width:
        shown = label_width(card.cost, card.time, 0)
    draw_label(draw, (left + (width - shown) // 2, label_y), card.cost, card.time,
               card.income, fill=ink, max_width=shown)


def _banner(draw: Draw, top: int, text: str) -> int:
    """``text`` centred in a rounded frame below ``top``, on one line or
    wrapped to two; returns the y below the banner's area."""
    lines = _wrap(text, WIDTH - 6)
    height = len(lines) * LINE + 4
    area = max(2 * LINE, height + 3)
    y0 = top + 1 + (area - 1 - height) // 2
    draw.rounded_rectangle((0, y0, WIDTH - 1, y0 + height - 1), radius=3, outline=ON)
    for i, line in enumerate(lines):
        BIG.draw(draw, ((WIDTH - BIG.width(line)) // 2 + 1, y0 + 2 + i * LINE), line)
    return top + area


def _wrap(text: str, width: int) -> list[str]:
    """``text`` on one big line, or split at a space into two (the second cut
    with an ellipsis if needed)."""
    if BIG.width(text) <= width:
        return [text]
    words = text.split(" ")
    for cut in range(len(words) - 1, 0, -1):
        first = " ".join(words[:cut])
        if BIG.width(first) <= width:
            return [first, BIG.fit(" ".join(words[cut:]), width)]
    return [BIG.fit(text, width)]


def _tally_row(draw: Draw, y: int, player: PlayerLine, tile: bool, winner: bool) -> None:
    """"> Green   25+7-2x4=24": the score sum right-aligned after the name."""
    bonus = player.score - player.buttons + 2 * player.empty
    sum_text = (f"{player.buttons}" + (f"+{bonus}" if tile else "")
                + f"-2x{player.empty}{THIN}={THIN}{player.score}")
    if winner:
        BIG.draw(draw, (0, y), ARROW)
    room = WIDTH - BIG.width(sum_text) - 8
    BIG.draw(draw, (6, y), BIG.fit(_name(player), room))
    _right(draw, WIDTH - 1, y, sum_text)
