"""Crisp bitmap fonts for the 128x64 OLED, plus a few pixel icons.

Two fonts, both fixed-pitch and both pure bitmaps, so rendering never depends
on a TrueType default (Pillow >= 10.1 blurs digits at OLED sizes, design.md 6):

- :data:`BIG`: Pillow's built-in bitmap font (``load_default_imagefont()``),
  6 px per character, drawn on a 10 px line: capitals 7 px high, descenders
  below. 21 characters fill the 128 px width. Use it for everything a player
  must read.
- :data:`TINY`: luma.core's 3x5 ``TINY_FONT`` (M, N, W widened), 4 px per
  character on a 6 px line (about 30 characters per width). Lower case is
  hard to read at 3x5, so TINY always draws upper case. Use it for legends
  and tags.

Icons are control characters inside ordinary strings, so a label such as
``f"5{BUTTON}{THIN}4{HOURGLASS}"`` is measured and drawn like any text.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from luma.core.legacy.font import TINY_FONT
from PIL import Image, ImageDraw, ImageFont

BUTTON = "\x01"     #: a sewing button (a disk with two holes): buttons
HOURGLASS = "\x02"  #: an hourglass: time cost
ARROW = "\x03"      #: a right-pointing triangle: the active player or cursor
ELLIPSIS = "\x04"   #: three dots: text was cut here
UP = "\x05"         #: a small up triangle: more above
DOWN = "\x06"       #: a small down triangle: more below
THIN = "\x07"       #: a 2 px space
ICONS = (BUTTON, HOURGLASS, ARROW, ELLIPSIS, UP, DOWN, THIN)

_UNICODE = {"\u2026": ELLIPSIS, "\u2013": "-", "\u2014": "-", "\u2212": "-",
            "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
            "\u25b6": ARROW, "\u2192": ">", "\u2190": "<"}


def _bitmap(rows: str) -> Image.Image:
    """A mode "1" image from rows of '#'/'.' separated by spaces."""
    lines = rows.split()
    image = Image.new("1", (len(lines[0]), len(lines)), 0)
    image.putdata([1 if ch == "#" else 0 for line in lines for ch in line])
    return image


@dataclass(frozen=True)
class _Icon:
    """An icon bitmap placed ``dy`` px below the line top; ``advance`` px wide."""

    image: Image.Image | None
    dy: int
    advance: int


class Font:
    """A bitmap font with inline icons (see :data:`BIG` and :data:`TINY`).

    ``advance`` px per character (TINY's M, N, W are wider; use
    :meth:`width`), ``line`` px per text line (the pitch to use between
    lines); the capitals occupy rows ``top .. top+cap-1`` below the ``y``
    given to :meth:`draw`. Characters the font lacks are drawn as '?'.
    """

    _latin1 = False   # True when the font has the Latin-1 letters too

    def __init__(self, name: str, advance: int, line: int, top: int, cap: int,
                 icons: dict[str, _Icon]):
        self.name, self.advance, self.line, self.top, self.cap = name, advance, line, top, cap
        self._icons = icons

    def clean(self, text: str) -> str:
        """``text`` with characters the font lacks replaced ('?') or mapped."""
        out = []
        for ch in text:
            ch = _UNICODE.get(ch, ch)
            ok = ch in self._icons or " " <= ch <= "~" or (self._latin1 and "\xa1" <= ch <= "\xff")
            out.append(ch if ok else "?")
        return "".join(out)

    def width(self, text: str) -> int:
        """Width in px of ``text`` as :meth:`draw` draws it, including the
        1 px gap after the last character (0 for "")."""
        icons = self._icons
        return sum(icons[ch].advance if ch in icons else self._advance(ch)
                   for ch in self.clean(text))

    def _advance(self, ch: str) -> int:
        return self.advance

    def fit(self, text: str, width: int) -> str:
        """``text`` cut to at most ``width`` px, ending in an ellipsis if cut."""
        text = self.clean(text)
        if self.width(text) <= width:
            return text
        room = width - self._icons[ELLIPSIS].advance
        while text and self.width(text) > room:
            text = text[:-1]
        return text.rstrip() + ELLIPSIS if room >= 0 else ""

    def draw(self, draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str,
             fill: int = 1) -> int:
        """Draw ``text`` with its line top at ``xy``, lit (``fill`` 1) or dark
        (``fill`` 0); return the x after it."""
        x, y = xy
        fill = 255 if fill else 0
        run = ""
        for ch in self.clean(text):
            icon = self._icons.get(ch)
            if icon is None:
                run += ch
                continue
            x = self._run(draw, x, y, run, fill)
            run = ""
            if icon.image is not None:
                draw.bitmap((x, y + icon.dy), icon.image, fill=fill)
            x += icon.advance
        return self._run(draw, x, y, run, fill)

    def _run(self, draw, x, y, text, fill):  # pragma: no cover - overridden
        raise NotImplementedError


class _PillowFont(Font):
    """Pillow's built-in bitmap font; its row 0 is always blank, so it is
    drawn 1 px higher and fits a 10 px line."""

    _latin1 = True

    def __init__(self, icons: dict[str, _Icon]):
        super().__init__("big", 6, 10, 1, 7, icons)
        self.pil = ImageFont.load_default_imagefont()

    def _run(self, draw, x, y, text, fill):
        if text:
            draw.text((x, y - 1), text, font=self.pil, fill=fill)
        return x + self.advance * len(text)


class _LegacyFont(Font):
    """luma.core's 3x5 column-byte font (bit 1 is the top row), with wider
    M, N and W (at 3 px they read as each other) and a 3 px space; cached
    per string."""

    _WIDE = {"M": "#...# ##.## #.#.# #...# #...#", "W": "#...# #...# #.#.# ##.## #...#",
             "N": "#..# ##.# #.## #..# #..#"}

    def __init__(self, columns, icons: dict[str, _Icon]):
        super().__init__("tiny", 4, 6, 0, 5, icons)
        self._glyphs = {chr(c): [byte >> 1 for byte in columns[c][:3]] for c in range(33, 127)}
        self._glyphs[" "] = [0, 0]
        for ch, rows in self._WIDE.items():
            image = _bitmap(rows)
            self._glyphs[ch] = [sum(bool(image.getpixel((x, y))) << y for y in range(5))
                                for x in range(image.width)]

    def clean(self, text: str) -> str:
        """Replace characters the font lacks with '?'."""
        return super().clean(text.upper())

    def _advance(self, ch: str) -> int:
        return len(self._glyphs[ch]) + 1

    @lru_cache(maxsize=512)
    def _image(self, text: str) -> Image.Image:
        cols = [col for ch in text for col in self._glyphs[ch] + [0]]
        image = Image.new("1", (len(cols), 5), 0)
        image.putdata([(col >> row) & 1 for row in range(5) for col in cols])
        return image

    def _run(self, draw, x, y, text, fill):
        if not text:
            return x
        image = self._image(text)
        draw.bitmap((x, y), image, fill=fill)
        return x + image.width


BIG: Font = _PillowFont({
    BUTTON: _Icon(_bitmap("..###.. .#####. ##.#.## ####### ##.#.## .#####. ..###.."), 1, 8),
    HOURGLASS: _Icon(_bitmap("##### #...# .#.#. ..#.. .###. ##### #####"), 1, 6),
    ARROW: _Icon(_bitmap("#... ##.. ###. #### ###. ##.. #..."), 1, 5),
    ELLIPSIS: _Icon(_bitmap("#.#.#"), 7, 6),
    UP: _Icon(_bitmap("..#.. .###. #####"), 3, 6),
    DOWN: _Icon(_bitmap("##### .###. ..#.."), 3, 6),
    THIN: _Icon(None, 0, 1),
})

TINY: Font = _LegacyFont(TINY_FONT, {
    BUTTON: _Icon(_bitmap(".#. ### .#."), 1, 4),
    HOURGLASS: _Icon(_bitmap("### .#. ###"), 1, 4),
    ARROW: _Icon(_bitmap("#.. ##. ### ##. #.."), 0, 4),
    ELLIPSIS: _Icon(_bitmap("#.#"), 4, 4),
    UP: _Icon(_bitmap(".#. ###"), 1, 4),
    DOWN: _Icon(_bitmap("### .#."), 2, 4),
    THIN: _Icon(None, 0, 1),
})
