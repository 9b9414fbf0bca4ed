"""The OLED renderer: a :class:`~firmware_py.companion.model.Screen` in, a
128x64 mode "1" image out. Pure: no clock, no I/O, the same screen and page
always give the same pixels (the golden images in ``tests/golden`` pin them).

Every screen has the same frame: an inverted title bar (rows 0..9) whose right
end carries the ``warning`` tag (white text in a black box) when one is set,
a body, and the ``footer`` legend in small capitals on the bottom rows
(59..63) when one is set.

Nothing a player must read is cut. Text is word-wrapped; what does not fit
on the screen at once goes on further *pages* that the display alternates
(:class:`Pager`, one page every :data:`PAGE_SECONDS`), with a small "1/2"
marking them. Only text that still cannot be placed (a single word wider
than its box, a title with no shorter form) is cut with an ellipsis, and the
renderer reports every such cut, every text row it had to drop and every two
texts that overlap: :func:`problems` lists them for a screen, so that a test
can render every screen the table produces and fail on any of them.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PIL import Image, ImageDraw

from ..companion.model import PatchCard, PlayerLine, Screen
from .fonts import ARROW, BIG, BUTTON, DOWN, HOURGLASS, THIN, TINY, UP, Font
from .patch_art import cell_size, draw_label, draw_patch, label_width
from .quilt_art import draw_quilt

WIDTH, HEIGHT = 128, 64
LINE = BIG.line        # 10 px per big text line
HEADER = 10            # the title bar: rows 0..9
FOOTER_Y = 59          # the legend: rows 59..63
PICTURE_W = 40         # the "Which move?" picture column at the right
TAG_MAX = 64           # widest warning tag in px
TAG_MIN = 40           # the tag may squeeze the title down to this
ON = 255               # a lit pixel in a mode "1" image
PAGE_SECONDS = 3.0     # how long each page of a paged screen shows
BANNER_ROWS = 2        # text rows of the turn screen's notice banner per page
SELECT_BAR = 2         # rows of the bar under the selected offer card
BOX_PICTURE_H = 24     # the patch picture's height on the box's turn screen

Draw = ImageDraw.ImageDraw


@dataclass
class _Canvas:
    """One page being drawn: the ``draw`` handle, the ``page`` asked for, how
    many ``pages`` the screen needs (found while drawing), and what went
    wrong: ``cut`` texts and text ``boxes`` (for the overlap check)."""

    draw: Draw
    page: int = 0
    pages: int = 1         # pages of the body
    tag_pages: int = 1     # parts of the warning tag shown in turn
    cut: list[str] = field(default_factory=list)
    boxes: list[tuple[int, int, int, int, str]] = field(default_factory=list)

    def paginate(self, rows: Sequence[str], per_page: int, what: str) -> list[str]:
        """The ``rows`` shown on this page when ``per_page`` fit at once."""
        if not rows:
            return []
        if per_page <= 0:
            self.cut.append(f"{what}: no room for {list(rows)!r}")
            return []
        count = -(-len(rows) // per_page)
        self.pages = max(self.pages, count)
        at = (self.page % count) * per_page
        return list(rows[at:at + per_page])

    def fit(self, font: Font, text: str, width: int, what: str) -> str:
        """``text`` cut to ``width`` px (the cut is recorded)."""
        shown = font.fit(text, width)
        if shown != font.clean(text):
            self.cut.append(f"{what}: {text!r} cut to {width} px")
        return shown

    def text(self, font: Font, xy: tuple[int, int], text: str, fill: int = 1) -> int:
        """Draw ``text`` and remember the box its letters cover; returns the x after it."""
        x, y = xy
        end = font.draw(self.draw, xy, text, fill)
        if text.strip():
            self.boxes.append((x, y + font.top, end - 2, y + font.top + font.cap - 1, text))
        return end


def render(screen: Screen, page: int = 0) -> Image.Image:
    """Draw page ``page`` (taken modulo :func:`page_count`) of ``screen`` as a
    128x64 mode "1" image (lit pixels 255, dark 0).

    Raises ValueError for an unknown ``screen.kind``.
    """
    return _paint(screen, page)[0]


def page_count(screen: Screen) -> int:
    """How many pages ``screen`` needs (1 when everything fits at once)."""
    return _paint(screen, 0)[1].pages


def problems(screen: Screen) -> list[str]:
    """Every text of ``screen`` not shown whole, on any page: cut texts,
    dropped rows and overlapping texts, each as a short description ([] when
    all is readable). Raises ValueError for an unknown kind."""
    found: list[str] = []
    pages = page_count(screen)
    for page in range(pages):
        canvas = _paint(screen, page)[1]
        where = f"page {page + 1}/{pages}: " if pages > 1 else ""
        found += [where + c for c in canvas.cut]
        found += [where + o for o in _overlaps(canvas.boxes)]
        found += [f"{where}{text!r} runs off the screen" for left, top, right, bottom, text
                  in canvas.boxes if left < 0 or top < 0 or right >= WIDTH or bottom >= HEIGHT]
    return list(dict.fromkeys(found))


def _overlaps(boxes) -> list[str]:
    out = []
    for i, (l1, t1, r1, b1, s1) in enumerate(boxes):
        for l2, t2, r2, b2, s2 in boxes[i + 1:]:
            if l1 <= r2 and l2 <= r1 and t1 <= b2 and t2 <= b1:
                out.append(f"{s1!r} overlaps {s2!r}")
    return out


def _paint(screen: Screen, page: int) -> tuple[Image.Image, _Canvas]:
    try:
        painter = _PAINTERS[screen.kind]
    except KeyError:
        raise ValueError(f"unknown screen kind {screen.kind!r}; expected one of "
                         f"{', '.join(sorted(_PAINTERS))}") from None
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    canvas = _Canvas(ImageDraw.Draw(image), max(0, page))
    painter(canvas, screen)
    _footer(canvas, screen.footer)
    return image, canvas


class Pager:
    """The pages of one ``screen`` in turn over time, for an output thread:
    :meth:`frame` gives the image at ``now`` (seconds; the first call starts
    page 1), :meth:`next_at` when the page next changes (None: one page).
    Nothing is drawn until the first call (not on the thread that makes it)."""

    def __init__(self, screen: Screen):
        self.screen = screen
        self.start: float | None = None
        self._pages: int | None = None

    @property
    def pages(self) -> int:
        """How many pages the screen has."""
        if self._pages is None:
            self._pages = page_count(self.screen)
        return self._pages

    def page(self, now: float) -> int:
        """The page (0-based) shown at ``now``."""
        if self.start is None:
            self.start = now
        return int((now - self.start) // PAGE_SECONDS) % self.pages

    def frame(self, now: float) -> Image.Image:
        """The image shown at ``now``."""
        if self.start is None:              # the first frame: page 1, and the page count
            self.start = now
            image, canvas = _paint(self.screen, 0)
            self._pages = canvas.pages
            return image
        return render(self.screen, self.page(now))

    def next_at(self, now: float) -> float | None:
        """When the next page is due, or None for a one-page screen."""
        if self.pages == 1:
            return None
        if self.start is None:
            self.start = now
        return self.start + (int((now - self.start) // PAGE_SECONDS) + 1) * PAGE_SECONDS


# --- the six screens -------------------------------------------------------

def _bottom(screen: Screen) -> int:
    """The body's bottom (exclusive): above the legend when there is one."""
    return FOOTER_Y - 1 if screen.footer else HEIGHT


def _choose(c: _Canvas, screen: Screen) -> None:
    """A setup or menu question: ``title`` in the bar, the ``options`` as a
    list with the cursor (an inverted row with an arrow) on ``selected``,
    scrolled to keep it visible (arrows at the right mark more rows), and the
    ``footer`` legend."""
    _header(c, [screen.title], screen.warning)
    _menu(c, HEADER + 1, _bottom(screen), screen.options, screen.selected)


def _prompt(c: _Canvas, screen: Screen) -> None:
    """A question during play: ``title`` in the bar, the ``lines`` of text
    (wrapped, paged when they do not fit), then the ``options`` with the
    cursor on ``selected`` (at least two option rows are kept when there are
    options), and the ``footer`` legend. When ``patches`` are given (the
    "Which move?" question), the selected one's picture stands in a column at
    the right and the text keeps to the left of it; several selected ones (the
    patches of one reading of several moves) share the column, top to bottom."""
    _header(c, [screen.title], screen.warning)
    bottom = _bottom(screen)
    pictures = [card for card in screen.patches if card.selected]
    right = WIDTH - PICTURE_W if screen.patches else WIDTH
    tall = (bottom - HEADER - 3 - 2 * (len(pictures) - 1)) // max(len(pictures), 1)
    for i, picture in enumerate(pictures):
        draw_patch(c.draw, (right + 2, HEADER + 2 + i * (tall + 2), PICTURE_W - 3, tall),
                   picture.shape, max_cell=6)
    rows = (bottom - HEADER - 1) // LINE
    text_rows = max(0, rows - min(len(screen.options), 2))
    y = _lines(c, HEADER + 1, _wrap_all(screen.lines, right - 2), text_rows, right)
    _menu(c, y, bottom, screen.options, screen.selected, right)


def _mismatch(c: _Canvas, screen: Screen) -> None:
    """Board and game disagree: an attention bar "! CHECK THE BOARD !", the
    ``lines`` saying what to fix (paged when they do not fit), and the ``footer``."""
    _header(c, ["! CHECK THE BOARD !", "CHECK THE BOARD", "CHECK BOARD"], screen.warning)
    rows = (_bottom(screen) - HEADER - 1) // LINE
    _lines(c, HEADER + 1, _wrap_all(screen.lines), rows)


def _deal(c: _Canvas, screen: Screen) -> None:
    """One patch of the dealt circle (``patches[0]``): "Lay out 7/33" in the
    bar (``title`` replaces "Lay out"), a big picture on the left and its
    cost, time and income on the right, and the ``footer``."""
    card = screen.patches[0] if screen.patches else None
    count = f" {card.index}/{card.total}" if card and card.total else ""
    _header(c, [f"{screen.title or 'Lay out'}{count}", f"Deal{count}", count.strip() or "Deal"],
            screen.warning)
    bottom = _bottom(screen)
    if card is None:
        _lines(c, HEADER + 1, ("no patch",), 1)
        return
    _card_details(c, HEADER + 1, bottom, card, ())


def _card_details(c: _Canvas, top: int, bottom: int, card: PatchCard,
                  head: Sequence[str]) -> None:
    """A big picture of ``card`` at the left of rows ``top``..``bottom``, and at
    the right the ``head`` rows, then its cost, time and income."""
    height = bottom - top - 2
    draw_patch(c.draw, (1, top + 1, 68, height), card.shape, grey=not card.buyable)
    rows = [*head, f"cost {card.cost}{BUTTON}", f"time {card.time}{HOURGLASS}",
            f"income {card.income}"]
    pitch = LINE + 2 if len(rows) * (LINE + 2) <= height + 2 else LINE
    if len(rows) * pitch > height + 2:      # little room: the price on one row
        rows = [*head, f"{card.cost}{BUTTON}{THIN}{card.time}{HOURGLASS} +{card.income}"]
    shown = c.paginate(rows, max(1, (bottom - top - 1) // pitch), "patch details")
    for i, text in enumerate(shown):
        _text(c, 72, top + 2 + i * pitch, text, WIDTH - 72)


def _turn(c: _Canvas, screen: Screen) -> None:
    """Whose turn: the bar names the active player and their space
    ("Green to move @12"); one row per player (arrow on the active one):
    name, buttons, income ("+3") and the score as it stands ("-150pt"); the
    offer as three pictures across the bottom with cost, time and income
    under each (a bar under the selected one's label, unbuyable ones
    dithered). A ``notice`` replaces the player rows with a framed
    banner (two rows per page; a two-row banner takes a few rows from the
    pictures). A patch numbered with ``total`` (a free layout) is shown alone
    and large with "3 of 21", its cost, time and income; with no patch, the
    ``lines`` say what to do."""
    active = next((p for p in screen.players if p.active), None)
    _header(c, _turn_titles(active), screen.warning)
    bottom = _bottom(screen)
    if screen.notice:
        top = _banner(c, HEADER, screen.notice)
    else:
        top = HEADER + 2 * LINE
        for i, player in enumerate(screen.players[:2]):
            _player_row(c, HEADER + i * LINE, player)
    cards = screen.patches[:3]
    if len(cards) == 1 and cards[0].total:
        card = cards[0]
        _card_details(c, top, bottom, card, (f"{card.index} of {card.total}",))
        return
    if not cards:
        _lines(c, top + 1, _wrap_all(screen.lines or ("no patches left",)),
               (bottom - top - 1) // LINE)
        return
    _, _, pic_w, pic_h = _picture_box((0, top, 42, bottom - top))
    size = min((cell_size(card.shape, pic_w, pic_h, max_cell=6) for card in cards), default=0)
    for i, card in enumerate(cards):
        _offer_card(c, (i * 43, top, 42, bottom - top), card, size)


def _end(c: _Canvas, screen: Screen) -> None:
    """The final tally: the winner in the bar (``title``, else "<name> wins"
    from the best score; its first two words beside a warning), a legend "BUTTONS+TILE-2xEMPTY=SCORE" and one row
    per player "25+7-2x4=24" (the tile column only when a player has the
    special tile; arrow on the best score), then the ``lines`` (e.g. the
    tie-break, paged when they do not fit) and the ``footer``."""
    best = max(screen.players, key=lambda p: p.score, default=None)
    tied = sum(p.score == best.score for p in screen.players) > 1 if best else False
    title = screen.title or (f"{_name(best)} wins" if best and not tied else "Game over")
    _header(c, [title], screen.warning)
    bottom = _bottom(screen)
    tile = any(p.special for p in screen.players)
    c.text(TINY, (1, HEADER + 2), "BUTTONS+TILE-2xEMPTY=SCORE" if tile
           else "BUTTONS-2xEMPTY=SCORE")
    y = HEADER + 8
    for player in screen.players[:2]:
        _tally_row(c, y, player, tile, not tied and player is best)
        y += LINE
    _lines(c, y, _wrap_all(screen.lines), max(0, (bottom - y) // LINE))


def _box(c: _Canvas, screen: Screen) -> None:
    """The box's turn: ``title`` in the bar ("Box: 2nd patch"); at the right the box's
    quilt board (``quilt``, 48 px square: squares covered before are grey, the
    patch placed now lit, a leather patch lit with a dark centre); at the left the
    patch's picture (``patches[0]``) above the ``lines`` to do (two rows a page),
    or the ``notice`` in their place; the ``footer`` below."""
    _header(c, [screen.title, screen.title.split(": ")[-1], "Box"], screen.warning)
    bottom = _bottom(screen)
    right = WIDTH
    if screen.quilt is not None:
        q = screen.quilt
        size = FOOTER_Y - HEADER - 1
        right = WIDTH - size - 1
        draw_quilt(c.draw, (right + 1, HEADER + 1, size, size), q.rows, q.cols, q.before,
                   q.patch, q.leather)
    top = HEADER + 1
    if screen.patches:
        draw_patch(c.draw, (1, top + 1, right - 4, BOX_PICTURE_H), screen.patches[0].shape,
                   max_cell=6)
        top += BOX_PICTURE_H + 2
    width = right - 3
    text = [screen.notice] if screen.notice else list(screen.lines)
    rows = [row for line in text for row in ([line] if TINY.width(line) <= width + 1
                                             else _wrap(BIG, line, width))]
    _lines(c, top, rows, max(1, (bottom - top) // LINE), right - 1)


_PAINTERS: dict[str, Callable[[_Canvas, Screen], None]] = {
    "choose": _choose, "deal": _deal, "turn": _turn, "prompt": _prompt,
    "mismatch": _mismatch, "end": _end, "box": _box}


# --- pieces ----------------------------------------------------------------

def _header(c: _Canvas, titles: Sequence[str], warning: str) -> None:
    """The inverted bar: the warning tag at the right, then the first of
    ``titles`` that fits beside it (``titles`` are forms of the same words,
    shortest last). The tag stays whole beside the first title that leaves it
    room; else it is paged in words so that the shortest title still fits,
    but never below ``TAG_MIN`` px. When even that leaves no ``TAG_MIN`` px,
    the bar shows the first title whole and the warning across the bar in
    turn, so no title is cut."""
    c.draw.rectangle((0, 0, WIDTH - 1, HEADER - 1), fill=ON)
    avail = WIDTH - 3 - min(BIG.width(t) for t in titles)
    if warning and avail < TAG_MIN:
        parts = _tag_parts(warning, WIDTH - 3)
        c.tag_pages = 2 * len(parts)
        if c.page % 2:
            _tag(c, warning, WIDTH - 3, parts[(c.page // 2) % len(parts)])
            return
        warning = ""
    room = min(TAG_MAX, avail) - 1
    if warning:
        whole = max(TINY.width(w) for w in warning.split(" / "))
        if any(whole <= WIDTH - 4 - BIG.width(t) for t in titles):
            room = whole
    left = _tag(c, warning, room) - 3
    title = next((t for t in titles if BIG.width(t) <= left), None)
    c.text(BIG, (2, 0), title if title is not None else c.fit(BIG, titles[-1], left, "title"),
           fill=0)


def _tag_parts(warning: str, room: int) -> list[str]:
    """``warning`` in pieces of at most ``room`` px, each warning (" / ") on its own."""
    return [piece for part in warning.split(" / ") for line in _wrap(TINY, part, room)
            for piece in _pieces(TINY, line, room)]


def _tag(c: _Canvas, warning: str, room: int, part: str | None = None) -> int:
    """Draw ``warning`` as a black tag whose text is at most ``room`` px wide,
    at the right end of the bar; several warnings (joined by " / ") or one too
    wide show in turn, a part per page (``part``: this one, the pages counted
    by the caller). Returns the tag's left edge (``WIDTH`` without a warning),
    the same on every page. The tag's text joins the overlap check."""
    if not warning:
        return WIDTH
    parts = _tag_parts(warning, room)
    widest = max(TINY.width(p) for p in parts)
    if part is None:
        c.tag_pages = len(parts)
        part = parts[c.page % len(parts)]
    text = c.fit(TINY, part, room, "warning")
    left = WIDTH - 1 - min(widest, room)
    c.draw.rectangle((left, 1, WIDTH - 1, HEADER - 2), fill=0)
    c.text(TINY, (WIDTH - TINY.width(text), 2), text)
    return left


def _footer(c: _Canvas, text: str) -> None:
    """Draw the legend in small capitals, with "1/2" at its right end on a
    paged screen (drawn last, when the page count is known)."""
    mark = f"{c.page % c.pages + 1}/{c.pages}" if c.pages > 1 else ""
    c.pages = max(c.pages, c.tag_pages)       # the tag's parts turn too, unmarked
    room = WIDTH - 1 - (TINY.width(mark) + 2 if mark else 0)
    if text:
        c.text(TINY, (1, FOOTER_Y), c.fit(TINY, text, room, "footer"))
    if mark:
        c.text(TINY, (WIDTH - TINY.width(mark), FOOTER_Y), mark)


def _text(c: _Canvas, x: int, y: int, text: str, width: int, fill: int = 1) -> None:
    """One line of text in ``width`` px: big if it fits, else small capitals,
    else big cut with an ellipsis (reported)."""
    if BIG.width(text) <= width or TINY.width(text) > width + 1:
        c.text(BIG, (x, y), c.fit(BIG, text, width, "text"), fill)
    else:
        c.text(TINY, (x, y + BIG.top + 1), text, fill)


def _lines(c: _Canvas, top: int, lines: Sequence[str], rows: int, right: int = WIDTH) -> int:
    """Text rows from ``top`` left of x = ``right``, ``rows`` per page; returns the y
    below the last."""
    shown = c.paginate(lines, rows, "lines")
    for i, line in enumerate(shown):
        _text(c, 1, top + i * LINE, line, right - 2)
    return top + len(shown) * LINE


def _wrap(font: Font, text: str, width: int, phrases: bool = False) -> list[str]:
    """``text`` word-wrapped into lines of at most ``width`` px (a word wider
    than that stays whole on its own line). With ``phrases``, the parts
    between commas are kept on one line when they fit on one."""
    lines: list[str] = []
    parts = re.split(r"(?<=[,;.]) +", text) if phrases else [text]
    for part in parts:
        if phrases and lines and font.width(part) <= width \
                and font.width(f"{lines[-1]} {part}") > width:
            lines.append(part)
            continue
        for word in part.split():
            if lines and font.width(f"{lines[-1]} {word}") <= width:
                lines[-1] = f"{lines[-1]} {word}"
            else:
                lines.append(word)
    return lines or [""]


def _pieces(font: Font, text: str, width: int) -> list[str]:
    """``text`` split into pieces of at most ``width`` px (a long path in a
    warning shows piece by piece rather than cut)."""
    pieces = [""]
    for ch in text:
        if pieces[-1] and font.width(pieces[-1] + ch) > width:
            pieces.append("")
        pieces[-1] += ch
    return pieces


def _wrap_all(lines: Sequence[str], width: int = WIDTH - 2) -> list[str]:
    """Each of ``lines`` kept whole when it fits, else wrapped at spaces."""
    out: list[str] = []
    for line in lines:
        out += [line] if BIG.width(line) <= width else _wrap(BIG, line, width)
    return out


def _menu(c: _Canvas, top: int, bottom: int, options: Sequence[str], selected: int,
          right: int = WIDTH) -> None:
    """Options one per row between ``top`` and ``bottom`` left of x = ``right``, scrolled
    so the ``selected`` one is visible; it is inverted and marked with an arrow."""
    if not options:
        return
    rows = (bottom - top) // LINE
    if rows <= 0:
        c.cut.append(f"options: no room for {list(options)!r}")
        return
    start = max(0, min(selected - rows // 2, len(options) - rows))
    more = len(options) > rows
    width = right - 8 - (7 if more else 0)
    for i, option in enumerate(options[start:start + rows]):
        y, chosen = top + i * LINE, start + i == selected
        if chosen:
            c.draw.rectangle((0, y, right - 1, y + LINE - 1), fill=ON)
            BIG.draw(c.draw, (1, y), ARROW, fill=0)
        _text(c, 7, y, option, width, fill=0 if chosen else 1)
    if more:
        _scroll_marks(c.draw, top, top + rows * LINE, start > 0, start + rows < len(options),
                      right)


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


def _player_row(c: _Canvas, y: int, player: PlayerLine) -> None:
    """"> Green  12(b)  +3  -150pt": arrow when active, name, buttons,
    income, score, numbers right-aligned in columns."""
    if player.active:
        BIG.draw(c.draw, (0, y), ARROW)
    c.text(BIG, (6, y), c.fit(BIG, _name(player), 36, "player name"))
    _right(c, 67, y, f"{player.buttons}{BUTTON}")
    _right(c, 88, y, f"+{player.income}")
    _right(c, WIDTH - 1, y, f"{player.score}pt")


def _right(c: _Canvas, right: int, y: int, text: str) -> None:
    """Big text whose last lit column is ``right`` - 1."""
    c.text(BIG, (right - BIG.width(text) + 1, y), text)


def _picture_box(box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """Where an offer card's picture goes inside the card ``box``."""
    left, top, width, height = box
    return left + 2, top + 1, width - 4, height - LINE - 3


def _offer_card(c: _Canvas, box: tuple[int, int, int, int], card: PatchCard, size: int) -> None:
    """One patch on offer in ``box`` (left, top, width, height): the picture
    (squares of ``size`` px) above, the price label below it, and when
    selected a bar :data:`SELECT_BAR` px tall along the card's bottom edge
    under the label; dithered when not buyable. The bar's rows lie within one
    8-row page of the display (the card's bottom is always the body's bottom:
    row 57 above a legend, 63 without), so moving the selection changes one
    page of two cards and nothing else. A label without room for the income
    is reported."""
    left, top, width, height = box
    label_y = top + height - 1 - LINE
    draw_patch(c.draw, _picture_box(box), card.shape, grey=not card.buyable, max_cell=size)
    if card.selected:       # the bar: the card's last two rows, one display page
        bottom = top + height - 1
        c.draw.rectangle((left, bottom - SELECT_BAR + 1, left + width - 1, bottom), fill=ON)
    shown = label_width(card.cost, card.time, card.income)
    if shown > width:
        c.cut.append(f"label of patch {card.id}: income +{card.income} left out")
        shown = label_width(card.cost, card.time, 0)
    x = left + (width - shown) // 2
    draw_label(c.draw, (x, label_y), card.cost, card.time, card.income, max_width=shown)
    c.boxes.append((x, label_y + BIG.top, x + shown - 1, label_y + BIG.top + BIG.cap - 1,
                    f"label of patch {card.id}"))


def _banner(c: _Canvas, top: int, text: str) -> int:
    """``text`` centred in a rounded frame below ``top``, wrapped to two rows
    (more go on further pages, see :func:`_notice_pages`); returns the y below
    the banner's area."""
    pages = _notice_pages(text, WIDTH - 6, BANNER_ROWS)
    rows = max(len(page) for page in pages)
    lines = [line for page in pages for line in page + [""] * (BANNER_ROWS - len(page))]
    shown = c.paginate(lines if len(pages) > 1 else pages[0], BANNER_ROWS, "notice")
    height = rows * LINE + 4
    area = max(2 * LINE, height + 3)
    y0 = top + 1 + (area - 1 - height) // 2
    c.draw.rounded_rectangle((0, y0, WIDTH - 1, y0 + height - 1), radius=3, outline=ON)
    for i, line in enumerate(shown):
        line = c.fit(BIG, line, WIDTH - 6, "notice")
        c.text(BIG, ((WIDTH - BIG.width(line)) // 2 + 1, y0 + 2 + i * LINE), line)
    return top + area


def _notice_pages(text: str, width: int, rows: int) -> list[list[str]]:
    """``text`` as pages of at most ``rows`` lines of ``width`` px. One page
    when it fits; else each sentence (ended by ". ") starts a page, its
    phrases (ended by "," or ";") are kept whole on one page, and a page of
    an instruction "Green: ..." that goes on over pages starts with "Green:"
    again, so that every page says whose it is."""
    plain = _wrap(BIG, text, width)
    if len(plain) <= rows:
        return [plain]
    pages: list[list[str]] = []
    for sentence in re.split(r"(?<=\.) +", text):
        head, _, body = sentence.partition(": ")
        if not body or " " in head:
            head, body = "", sentence
        lead = f"{head}: " if head else ""
        phrases, taken = re.split(r"(?<=[,;]) +", body), []
        for phrase in phrases:
            trial = _wrap(BIG, lead + " ".join(taken + [phrase]), width)
            if taken and len(trial) > rows:
                pages.append(_wrap(BIG, lead + " ".join(taken).rstrip(",;"), width))
                taken = []
            taken.append(phrase)
        last = _wrap(BIG, lead + " ".join(taken), width)
        pages += [last[i:i + rows] for i in range(0, len(last), rows)]
    return pages


def _tally_row(c: _Canvas, y: int, player: PlayerLine, tile: bool, winner: bool) -> None:
    """"> Green   25+7-2x4=24": the score sum right-aligned after the name."""
    bonus = player.score - player.buttons + 2 * player.empty
    sum_text = (f"{player.buttons}" + (f"+{bonus}" if tile else "")
                + f"-2x{player.empty}{THIN}={THIN}{player.score}")
    if winner:
        BIG.draw(c.draw, (0, y), ARROW)
    room = WIDTH - BIG.width(sum_text) - 8
    c.text(BIG, (6, y), c.fit(BIG, _name(player), room, "player name"))
    _right(c, WIDTH - 1, y, sum_text)
