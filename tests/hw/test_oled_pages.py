"""The OLED devices that send only changed pages and columns.

Every byte the paged devices hand to the luma serial interface is fed to a
model of the controller's RAM (SSD1306 horizontal addressing with column and
page windows; SH1106 page addressing with column nibbles). After each frame
that RAM must equal the RAM that luma's own device (which sends the whole
frame) leaves for the same image: a diff that skips a changed byte, sends a
page to the wrong place or packs a bit wrongly fails here. Byte counts are
checked exactly for known changes.
"""
from __future__ import annotations

import random

import pytest
from luma.oled.device import sh1106, ssd1306
from PIL import Image, ImageDraw

from firmware_py.companion.model import PatchCard, PlayerLine, Screen
from firmware_py.hw.oled_pages import (SH1106_WINDOW, SSD1306_WINDOW, ByteCounter, PagedSh1106,
                                       PagedSsd1306, changed_runs, pack_pages)
from firmware_py.rules import load_spec
from firmware_py.view.oled import render

# command -> how many argument bytes follow it
SSD1306_ARGS = {0x81: 1, 0x20: 1, 0x21: 2, 0x22: 2, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0x8D: 1,
                0xDA: 1, 0xD9: 1, 0xDB: 1}
SH1106_ARGS = {0x81: 1, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1, 0xAD: 1, 0x8D: 1}


class Ssd1306Ram:
    """The SSD1306's 8 x 128 display RAM in horizontal addressing mode."""

    def __init__(self):
        self.ram = [[None] * 128 for _ in range(8)]
        self.cols, self.pages, self.col, self.page = (0, 127), (0, 7), 0, 0

    def command(self, data: bytes) -> None:
        i = 0
        while i < len(data):
            op, args = data[i], data[i + 1:i + 1 + SSD1306_ARGS.get(data[i], 0)]
            i += 1 + len(args)
            if op == 0x20:
                assert args[0] == 0x00, "only horizontal addressing is modelled"
            elif op == 0x21:
                self.cols, self.col = (args[0], args[1]), args[0]
            elif op == 0x22:
                self.pages, self.page = (args[0], args[1]), args[0]

    def data(self, data: bytes) -> None:
        for byte in data:
            self.ram[self.page][self.col] = byte
            self.col += 1
            if self.col > self.cols[1]:
                self.col = self.cols[0]
                self.page = self.page + 1 if self.page < self.pages[1] else self.pages[0]

    def picture(self, offset: int = 0) -> list[list]:
        return [row[:] for row in self.ram]


class Sh1106Ram:
    """The SH1106's 8 x 132 display RAM in page addressing mode."""

    def __init__(self):
        self.ram = [[None] * 132 for _ in range(8)]
        self.col, self.page = 0, 0

    def command(self, data: bytes) -> None:
        i = 0
        while i < len(data):
            op = data[i]
            i += 1 + SH1106_ARGS.get(op, 0)
            if 0xB0 <= op <= 0xB7:
                self.page = op - 0xB0
            elif op <= 0x0F:
                self.col = (self.col & 0xF0) | op
            elif op <= 0x1F:
                self.col = (self.col & 0x0F) | ((op & 0x0F) << 4)

    def data(self, data: bytes) -> None:
        for byte in data:
            self.ram[self.page][self.col] = byte
            self.col = min(self.col + 1, 131)

    def picture(self, offset: int = 2) -> list[list]:
        return [row[offset:offset + 128] for row in self.ram]


def feed(model, counter: ByteCounter) -> None:
    """Play what ``counter`` logged into ``model`` and forget it."""
    for kind, data in counter.log:
        getattr(model, kind)(data)
    counter.reset()


KINDS = {"ssd1306": (PagedSsd1306, ssd1306, Ssd1306Ram),
         "sh1106": (PagedSh1106, sh1106, Sh1106Ram)}


class Pair:
    """A paged device and luma's own device of one kind, each over a logging counter
    feeding its own RAM model."""

    def __init__(self, kind: str, rotate: int = 0):
        paged, stock, model = KINDS[kind]
        self.paged_bus, self.stock_bus = ByteCounter(keep=True), ByteCounter(keep=True)
        self.paged = paged(self.paged_bus, rotate=rotate)
        self.stock = stock(self.stock_bus, rotate=rotate)
        self.paged_ram, self.stock_ram = model(), model()
        feed(self.paged_ram, self.paged_bus)
        feed(self.stock_ram, self.stock_bus)

    def show(self, image) -> tuple[int, int]:
        """Display ``image`` on both; returns the paged device's (command, data) bytes
        and checks that both controllers now hold the same picture."""
        self.paged.display(image)
        self.stock.display(image)
        sent = self.paged_bus.command_bytes, self.paged_bus.data_bytes
        feed(self.paged_ram, self.paged_bus)
        feed(self.stock_ram, self.stock_bus)
        assert self.paged_ram.picture() == self.stock_ram.picture()
        return sent


def patch_card(patch, **kw) -> PatchCard:
    return PatchCard(id=patch.id, shape=patch.shape, cost=patch.cost, time=patch.time,
                     income=patch.income, **kw)


def game_screens() -> list[Image.Image]:
    """Screens of a game in progress: turns with the cursor moving, a menu, an end."""
    patches = load_spec("patchwork").patches
    images = []
    for turn in range(12):
        offer = patches[turn:turn + 3]
        for chosen in range(3):
            players = (PlayerLine("Green", "green", position=turn * 2, buttons=5 + turn,
                                  income=turn // 3, empty=81 - turn, special=False,
                                  score=-150 + turn, active=turn % 2 == 0),
                       PlayerLine("Yellow", "yellow", position=turn * 2 + 1, buttons=5,
                                  income=1, empty=80, special=False, score=-155,
                                  active=turn % 2 == 1))
            cards = tuple(patch_card(p, selected=i == chosen, buyable=i != 1)
                          for i, p in enumerate(offer))
            images.append(render(Screen("turn", players=players, patches=cards,
                                        footer="NEXT:pick OK:buy")))
    for selected in range(5):
        images.append(render(Screen("choose", title="Menu", selected=selected,
                                    options=("Undo", "Correct buttons", "Claim tile",
                                             "End game", "Back"))))
    return images


def noise(seed: int) -> Image.Image:
    rng = random.Random(seed)
    image = Image.new("1", (128, 64))
    pixels = image.load()
    for _ in range(rng.choice((1, 5, 300, 4000))):
        pixels[rng.randrange(128), rng.randrange(64)] = rng.randrange(2)
    return image


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("rotate", [0, 2])
def test_the_controller_holds_what_a_full_redraw_would_after_every_frame(kind, rotate):
    """Screens of a game then random pictures: after each frame the controller's RAM,
    rebuilt from the bytes sent, equals the RAM after luma's full frame."""
    pair = Pair(kind, rotate)
    sizes = [sum(pair.show(image)) for image in game_screens() + [noise(s) for s in range(40)]]
    assert sizes[0] > 0 and max(sizes) <= 1024 + 8 * SH1106_WINDOW


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_first_frame_is_sent_whole_and_an_unchanged_one_not_at_all(kind):
    """A device starts with luma's blank frame sent whole; the same image again sends nothing."""
    bus = ByteCounter(keep=True)
    device = KINDS[kind][0](bus)
    data_writes = [data for what, data in bus.log if what == "data"]
    assert bus.data_bytes == 1024
    assert [len(d) for d in data_writes] == ([1024] if kind == "ssd1306" else [128] * 8)
    bus.reset()
    device.display(Image.new("1", (128, 64)))
    assert (bus.command_bytes, bus.data_bytes, bus.writes) == (0, 0, 0)


@pytest.mark.parametrize("kind,window", [("ssd1306", SSD1306_WINDOW), ("sh1106", SH1106_WINDOW)])
def test_exact_bytes_for_known_changes(kind, window):
    """One pixel: one window and one byte. Two far apart on one page: two windows.
    Near each other: one window with the bytes between. A full-width bar over
    pages 1..2 on an SSD1306: one window of two pages."""
    pair = Pair(kind)
    image = Image.new("1", (128, 64))
    image.putpixel((10, 20), 1)                      # page 2, column 10
    assert pair.show(image) == (window, 1)
    image.putpixel((100, 21), 1)                     # page 2, column 100
    assert pair.show(image) == (window, 1)
    image.putpixel((30, 22), 1)                      # columns 30 and 90: far apart
    image.putpixel((90, 22), 1)
    assert pair.show(image) == (2 * window, 2)
    image.putpixel((13, 17), 1)                      # page 2, column 13: 2 columns from 10
    image.putpixel((10, 20), 0)
    assert pair.show(image) == (window, 4)           # columns 10..13 resent
    image = image.copy()
    ImageDraw.Draw(image).rectangle((0, 8, 127, 23), fill=1)   # pages 1 and 2 whole
    expected = (window, 256) if kind == "ssd1306" else (2 * window, 256)
    assert pair.show(image) == expected


def test_changed_runs_merge_gaps_no_wider_than_a_window():
    """Runs of changed bytes, merged across gaps of at most ``gap`` unchanged bytes."""
    old = bytes(16)
    new = bytearray(16)
    for i in (0, 1, 5, 12):
        new[i] = 1
    assert changed_runs(old, bytes(new), 3) == [(0, 5), (12, 12)]
    assert changed_runs(old, bytes(new), 2) == [(0, 1), (5, 5), (12, 12)]
    assert changed_runs(old, old, 3) == []


def test_pack_pages_puts_the_top_row_in_bit_0():
    """Byte x of page p holds column x, rows 8p..8p+7, bit 0 the top row."""
    image = Image.new("1", (128, 64))
    image.putpixel((3, 0), 1)
    image.putpixel((127, 63), 1)
    image.putpixel((64, 13), 1)
    pages = pack_pages(image)
    assert len(pages) == 8 and all(len(p) == 128 for p in pages)
    assert pages[0][3] == 0x01 and pages[7][127] == 0x80 and pages[1][64] == 1 << 5
    assert sum(map(sum, pages)) == 0x01 + 0x80 + (1 << 5)


class FlakyBus:
    """A luma interface forwarding to ``noop`` that raises OSError on one data write."""

    def __init__(self):
        self.fail_at = None
        self.calls = 0

    def command(self, *cmd):
        pass

    def data(self, data):
        self.calls += 1
        if self.calls == self.fail_at:
            raise OSError(121, "Remote I/O error")

    def cleanup(self):
        pass


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_after_a_bus_error_the_next_frame_is_sent_whole(kind):
    """A write that fails half-way leaves the RAM unknown: the next frame goes out whole."""
    flaky = FlakyBus()
    bus = ByteCounter(forward=flaky, keep=True)
    device = KINDS[kind][0](bus)
    model = KINDS[kind][2]()
    feed(model, bus)
    image = Image.new("1", (128, 64))
    ImageDraw.Draw(image).rectangle((0, 0, 20, 40), fill=1)     # two windows at least
    ImageDraw.Draw(image).rectangle((100, 0, 127, 40), fill=1)
    flaky.fail_at = flaky.calls + 2                  # fail after some pages went out
    with pytest.raises(OSError):
        device.display(image)
    feed(model, bus)
    device.display(image)                            # the same image again
    assert bus.data_bytes == 1024
    feed(model, bus)
    reference = Pair(kind)
    reference.show(image)
    assert model.picture() == reference.stock_ram.picture()


def test_byte_counter_counts_only_what_its_interface_took():
    """A write the forwarded interface refuses is not counted."""
    flaky = FlakyBus()
    bus = ByteCounter(forward=flaky)
    bus.command(0x21, 0, 127)
    bus.data([1, 2, 3])
    flaky.fail_at = 2
    with pytest.raises(OSError):
        bus.data([4, 5])
    assert (bus.command_bytes, bus.data_bytes, bus.writes, bus.total) == (3, 3, 2, 6)
    assert bus.log == []                             # kept only with keep=True
