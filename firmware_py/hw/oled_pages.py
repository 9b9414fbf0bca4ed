"""OLED devices that send only what changed, and a byte-counting luma interface.

The SSD1306 and SH1106 controllers keep the picture in their own RAM, one byte
per column per page (a page is 8 pixel rows, bit 0 the top row). luma's stock
``display()`` packs all 8,192 pixels in a Python loop and sends the whole
1,024-byte frame on every change: about 23 ms at 400 kHz I2C, 92 ms at 100 kHz.

:class:`PagedSsd1306` and :class:`PagedSh1106` are luma's own device classes
(same set-up, contrast, ``hide``/``show``, ``cleanup``) with ``display()``
replaced: the image is packed by Pillow in C (rotated a quarter turn, each
pixel row of the rotated image is one column of the display, 8 bits a page),
compared page by page with what the controller already holds, and only the
changed column runs of the changed pages are sent, each behind its own address
window (SSD1306: column and page range in horizontal addressing; SH1106: page
address and column nibbles, which are its only addressing mode). After a bus
error the controller's RAM is unknown, so the next frame is sent whole.

:class:`ByteCounter` is a luma serial interface (``command``/``data``/
``cleanup``) that counts, and optionally keeps, every byte it is handed before
passing it on (by default to luma's ``noop``, which swallows it).
"""
from __future__ import annotations

import re

from luma.core.interface.serial import noop
from luma.oled.device import sh1106, ssd1306
from PIL import Image

_CHANGED = re.compile(rb"[^\x00]+")      # runs of changed bytes in an XOR of two pages

SSD1306_WINDOW = 6   #: command bytes that open an SSD1306 window (column and page range)
SH1106_WINDOW = 3    #: command bytes that address an SH1106 page and start column


class ByteCounter:
    """A luma serial interface that counts the bytes it is given.

    ``forward``: the interface that really sends them (default: luma's
    ``noop``, which swallows them); it is called first, so bytes it refuses
    (it raises) are not counted. ``keep=True`` also keeps every call in
    ``log`` as ("command" | "data", bytes) in order, for rebuilding the
    controller's RAM in tests. Counters: ``command_bytes``, ``data_bytes``,
    ``writes`` (calls); :meth:`reset` zeroes them.
    """

    def __init__(self, forward=None, keep: bool = False):
        self.forward = forward if forward is not None else noop()
        self.keep = keep
        self.log: list[tuple[str, bytes]] = []
        self.reset()

    def reset(self) -> None:
        """Zero the counters and forget the log."""
        self.command_bytes = 0
        self.data_bytes = 0
        self.writes = 0
        self.log = []

    @property
    def total(self) -> int:
        """Command and data bytes handed over so far."""
        return self.command_bytes + self.data_bytes

    def command(self, *cmd: int) -> None:
        """Send command bytes (each 0..255); raises what ``forward`` raises."""
        self.forward.command(*cmd)
        self.command_bytes += len(cmd)
        self.writes += 1
        if self.keep:
            self.log.append(("command", bytes(cmd)))

    def data(self, data) -> None:
        """Send display data (a list of ints 0..255); raises what ``forward`` raises."""
        self.forward.data(data)
        self.data_bytes += len(data)
        self.writes += 1
        if self.keep:
            self.log.append(("data", bytes(data)))

    def cleanup(self) -> None:
        """Release the interface (passed on)."""
        self.forward.cleanup()


def pack_pages(image: Image.Image) -> list[bytes]:
    """A mode "1" image (width x height, height a multiple of 8) as controller
    pages: ``height // 8`` byte strings of ``width`` bytes, byte x of page p
    holding pixels (x, 8p)..(x, 8p+7), bit 0 the top one. Packed by Pillow in C."""
    pages = image.height // 8
    packed = image.transpose(Image.Transpose.ROTATE_270).tobytes()
    return [packed[pages - 1 - p::pages] for p in range(pages)]


def changed_runs(old: bytes, new: bytes, gap: int) -> list[tuple[int, int]]:
    """The column runs (first, last), inclusive, where ``new`` differs from ``old``
    (same length), two runs merged when at most ``gap`` unchanged bytes part
    them (sending those again costs less than a new address window)."""
    width = len(new)
    xor = (int.from_bytes(old, "big") ^ int.from_bytes(new, "big")).to_bytes(width, "big")
    runs: list[tuple[int, int]] = []
    for match in _CHANGED.finditer(xor):
        first, last = match.start(), match.end() - 1
        if runs and first - runs[-1][1] - 1 <= gap:
            runs[-1] = (runs[-1][0], last)
        else:
            runs.append((first, last))
    return runs


class _PageDiff:
    """What both paged devices share: the pages the controller holds (None: unknown,
    e.g. before the first frame or after a bus error) and the changed runs."""

    _ram: list[bytes] | None = None
    window_bytes = SSD1306_WINDOW

    def display(self, image: Image.Image) -> None:
        """Show a mode "1" image of the device's size, sending only what changed.

        Raises AssertionError for a wrong mode or size (as luma does) and
        whatever the serial interface raises (the next frame is then sent whole).
        """
        assert image.mode == self.mode
        assert image.size == self.size
        pages = pack_pages(self.preprocess(image))
        held, self._ram = self._ram, None           # unknown until every byte went out
        if held is None:
            runs = [[(0, self._w - 1)] for _ in pages]
        else:
            runs = [changed_runs(old, new, self.window_bytes) if old != new else []
                    for old, new in zip(held, pages)]
        self._send(pages, runs)
        self._ram = pages

    def forget(self) -> None:
        """Treat the controller's RAM as unknown: the next frame is sent whole."""
        self._ram = None


class PagedSsd1306(_PageDiff, ssd1306):
    """luma's ``ssd1306`` device sending only changed column runs (see module doc).

    Same arguments as luma's ``ssd1306`` (serial interface, width, height,
    rotate). Runs on adjacent pages covering the same columns go out as one
    window.
    """

    window_bytes = SSD1306_WINDOW

    def _send(self, pages: list[bytes], runs: list[list[tuple[int, int]]]) -> None:
        for first_page, last_page, first, last in _windows(runs):
            self.command(self._const.COLUMNADDR, self._colstart + first, self._colstart + last,
                         self._const.PAGEADDR, first_page, last_page)
            self.data(list(b"".join(pages[p][first:last + 1]
                                    for p in range(first_page, last_page + 1))))


class PagedSh1106(_PageDiff, sh1106):
    """luma's ``sh1106`` device sending only changed column runs (see module doc).

    Same arguments as luma's ``sh1106`` (including ``page_address_offset``, the
    column where the 128-pixel picture starts in the 132-column RAM).
    """

    window_bytes = SH1106_WINDOW

    def _send(self, pages: list[bytes], runs: list[list[tuple[int, int]]]) -> None:
        for page, page_runs in enumerate(runs):
            for first, last in page_runs:
                column = self._page_address_offset + first
                self.command(0xB0 + page, column & 0x0F, 0x10 | (column >> 4))
                self.data(list(pages[page][first:last + 1]))


def _windows(runs: list[list[tuple[int, int]]]) -> list[tuple[int, int, int, int]]:
    """SSD1306 windows (first page, last page, first column, last column) covering
    ``runs`` (per page): a page with one run joins the window above it when
    that costs no more bytes than a window of its own."""
    windows: list[list[int]] = []
    for page, page_runs in enumerate(runs):
        for first, last in page_runs:
            if windows and len(page_runs) == 1 and _joins(windows[-1], page, first, last):
                top = windows[-1]
                top[1], top[2], top[3] = page, min(top[2], first), max(top[3], last)
            else:
                windows.append([page, page, first, last])
    return [tuple(w) for w in windows]  # type: ignore[misc]


def _joins(window: list[int], page: int, first: int, last: int) -> bool:
    """Whether the run (first, last) on ``page`` should join ``window``."""
    top, bottom, left, right = window
    if bottom != page - 1:
        return False
    alone = (bottom - top + 1) * (right - left + 1) + SSD1306_WINDOW + (last - first + 1)
    joined = (page - top + 1) * (max(right, last) - min(left, first) + 1)
    return joined <= alone
