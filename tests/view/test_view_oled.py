"""The OLED renderer: golden images of the key screens, pixel for pixel.

Regenerate the golden PNGs (then look at every one before committing) with::

    UPDATE_GOLDEN=1 pytest tests/view/test_view_oled.py

Scaled copies for viewing: ``python tests/view/test_view_oled.py``
writes ``/tmp/oled-golden/*.png`` at 4x.
"""
from __future__ import annotations

import os
from dataclasses import replace
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from firmware_py.companion.model import PatchCard, PlayerLine, Screen
from firmware_py.rules import load_spec
from firmware_py.view import fonts
from firmware_py.view.oled import render
from firmware_py.view.patch_art import draw_label, draw_patch, label_width

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

PATCHWORK = {p.id: p for p in load_spec("patchwork").patches}
EXPRESS = {p.id: p for p in load_spec("patchwork-express").patches}


def card(patch, **kw) -> PatchCard:
    """A PatchCard of a catalogue patch."""
    return PatchCard(id=patch.id, shape=patch.shape, cost=patch.cost, time=patch.time,
                     income=patch.income, **kw)


GREEN = PlayerLine("Green", "green", position=12, buttons=7, income=3, empty=62,
                   special=False, score=-117, active=True)
YELLOW = PlayerLine("Yellow", "yellow", position=15, buttons=12, income=1, empty=70,
                    special=False, score=-128)
OFFER = (card(PATCHWORK[24]), card(PATCHWORK[6]), card(PATCHWORK[21]))

SCREENS: dict[str, Screen] = {
    "turn_notice": Screen(
        "turn", players=(GREEN, YELLOW), notice="Green: pay 10, take leather, +4 income",
        patches=(card(PATCHWORK[24], buyable=False), card(PATCHWORK[6], selected=True),
                 card(PATCHWORK[21]))),
    "turn_buy": Screen(
        "turn", players=(GREEN, YELLOW), notice="Green: pay 1, move to space 16",
        patches=(card(PATCHWORK[24], buyable=False), card(PATCHWORK[6], selected=True),
                 card(PATCHWORK[21])),
        footer="NEXT:other OK:buy BACK:cancel"),
    "turn_income": Screen(
        "turn", players=(GREEN, YELLOW), notice="Yellow: take 3 buttons, +3 income",
        patches=OFFER),
    "turn_warning": Screen(
        "turn", players=(GREEN, YELLOW), patches=OFFER, warning="sensor offline",
        footer="NEXT:pick OK:buy"),
    "leather_express": Screen(
        "prompt", title="Leather patch", lines=("Green won it.", "Place it on the quilt",
                                                "or set it aside?"),
        footer="OK:place  NEXT:set aside"),
    "prompt_two_match": Screen(
        "prompt", title="Which patch?", lines=("Both take 3 spaces:",),
        options=("cost 5, income 1", "cost 2, no income", "neither: undo"), selected=1,
        warning="LEDs failed", footer="NEXT:move  OK:choose"),
    "prompt_readings": Screen(
        "prompt", title="1 move or 2?",
        lines=("Yellow: 1st patch at 1, then 3rd patch at 6?",),
        options=("advance only", "1st then 3rd"), selected=1,
        patches=(card(PATCHWORK[17], selected=True, index=1, total=3),
                 card(PATCHWORK[4], selected=True, index=3, total=3)),
        footer="OK:YES NEXT:OTHER BACK:NO"),
    "mismatch": Screen(
        "mismatch", lines=("Yellow is not to move:", "put it back on 15.",
                           "Green moves from 12."), warning="sensor offline",
        footer="fix the board to go on"),
    "end_tally": Screen(
        "end", players=(
            PlayerLine("Green", "green", 53, 31, 12, 4, True, 30),
            PlayerLine("Yellow", "yellow", 53, 44, 14, 9, False, 26)),
        lines=("Game saved.",), footer="OK:new game"),
    "end_tie_express": Screen(
        "end", title="Yellow wins the tie", players=(
            PlayerLine("Green", "green", 29, 14, 5, 4, False, 6),
            PlayerLine("Yellow", "yellow", 29, 8, 4, 1, False, 6)),
        lines=("Tie: Yellow got to", "the last space first."), footer="OK:new game"),
    "deal": Screen(
        "deal", patches=(card(PATCHWORK[24], index=7, total=33),),
        footer="NEXT:next BACK:previous"),
    "choose": Screen(
        "choose", title="Which game?", options=("Patchwork", "Patchwork Express",
                                                "Free layout"),
        selected=1, footer="NEXT:move  OK:choose"),
    "menu_scrolled": Screen(
        "choose", title="Menu", options=("Undo", "Claim the 7x7 tile", "Correct buttons",
                                         "End the game", "Settings", "Back to game"),
        selected=4, warning="LEDs failed", footer="NEXT:move OK:choose BACK:close"),
}

UNDO = Screen("turn", players=(GREEN, YELLOW), patches=OFFER, footer="NEXT:choose OK:buy",
              notice="Green: return 3 buttons, the patch; token back to 17")
PAGED: dict[str, tuple[Screen, int]] = {
    "turn_undo_page1": (UNDO, 0),
    "turn_undo_page2": (UNDO, 1),
    "turn_free_layout": (Screen(
        "turn", players=(GREEN, YELLOW), footer="NEXT:choose OK:buy",
        patches=(card(PATCHWORK[24], selected=True, index=3, total=21),)), 0),
    "turn_free_layout_notice": (Screen(
        "turn", players=(GREEN, YELLOW), footer="NEXT:choose OK:buy",
        notice="Yellow: take 3 buttons",
        patches=(card(PATCHWORK[6], selected=True, buyable=False, index=21, total=21),)), 0),
    "mismatch_two_warnings_page2": (Screen(
        "mismatch", lines=("Put Green and Yellow on 12.", "Yellow's token belongs",
                           "on 15: put it there.", "Nothing belongs on 16."),
        warning="sensor offline / not saving: disk", footer="fix the board to go on"), 1),
}
SCREENS.update({name: screen for name, (screen, _) in PAGED.items()})


def _path(name: str) -> Path:
    return GOLDEN / f"{name}.png"


@pytest.mark.parametrize("name", sorted(SCREENS))
def test_golden(name: str) -> None:
    """Each key screen matches its golden PNG pixel for pixel."""
    image = render(SCREENS[name], PAGED[name][1] if name in PAGED else 0)
    assert (image.mode, image.size) == ("1", (128, 64))
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        image.save(_path(name))
    assert _path(name).exists(), f"no golden image {_path(name)}: run UPDATE_GOLDEN=1 pytest"
    golden = Image.open(_path(name)).convert("1")
    diff = ImageChops.difference(image.convert("L"), golden.convert("L")).getbbox()
    assert diff is None, f"{name} differs from its golden image in box {diff}"
    assert image.tobytes() == golden.tobytes()


def test_golden_files_are_all_used() -> None:
    """No stale golden image lies around without a screen."""
    assert sorted(p.stem for p in GOLDEN.glob("*.png")) == sorted(SCREENS)


def _lit(image: Image.Image, x: int, y: int) -> bool:
    return bool(image.getpixel((x, y)))


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown screen kind 'menu'"):
        render(Screen("menu"))


def test_render_is_pure() -> None:
    """The same screen gives the same bytes, and the screen is not changed."""
    screen = SCREENS["turn_buy"]
    assert render(screen).tobytes() == render(screen).tobytes()
    assert screen == SCREENS["turn_buy"]


@pytest.mark.parametrize("kind", ["choose", "deal", "turn", "prompt", "mismatch", "end"])
def test_warning_tag_on_every_kind(kind: str) -> None:
    """The warning shows as a black tag with lit text at the right end of the
    (lit) title bar, and the bar is plain lit there without a warning."""
    screen = Screen(kind, title="Hi", patches=OFFER[:1], players=(GREEN, YELLOW))
    plain = render(screen)
    tagged = render(Screen(kind, title="Hi", patches=OFFER[:1], players=(GREEN, YELLOW),
                           warning="sensor offline"))
    assert all(_lit(plain, x, y) for x in range(118, 128) for y in range(0, 10))
    box = [(x, y) for x in range(70, 128) for y in range(1, 9)]
    dark = sum(not _lit(tagged, x, y) for x, y in box)
    assert 0.4 * len(box) < dark < len(box)          # a black box with lit text in it
    assert all(_lit(tagged, x, 0) for x in range(128))  # the bar's top row stays lit


def test_long_text_is_cut_not_overflowing() -> None:
    """A title and options far too long end in an ellipsis inside the screen."""
    long = "a very long option text that cannot fit at all"
    image = render(Screen("choose", title=long, options=(long, "b"), selected=1))
    assert fonts.BIG.fit(long, 100).endswith(fonts.ELLIPSIS)
    assert fonts.BIG.width(fonts.BIG.fit(long, 100)) <= 100
    # the last two columns of the unselected (too long) option row stay dark
    assert not any(_lit(image, x, y) for x in (126, 127) for y in range(11, 21))


def test_odd_text_and_values_render() -> None:
    """Characters the fonts lack become '?', odd values do not crash, and the
    substitution is visible (a '?' is drawn, not nothing)."""
    odd = Screen("choose", title="Größe \u2713", options=("\U0001f389", "é"), selected=9,
                 warning="\u00e9t\u00e9 \u2713", footer="\u2192 ok")
    assert render(odd).getbbox() is not None
    assert fonts.BIG.clean("a\u2713\u2026") == "a?" + fonts.ELLIPSIS
    assert fonts.TINY.clean("ok \u00e9") == "OK ?"
    for kind in ("choose", "deal", "turn", "prompt", "mismatch", "end"):
        assert render(Screen(kind)).getpixel((0, 0))        # just the bar, no crash


def test_fonts_are_bitmaps() -> None:
    """Text is drawn with Pillow's bitmap font, never a (blurring) TrueType."""
    from PIL import ImageFont
    assert type(fonts.BIG.pil) is ImageFont.ImageFont
    assert fonts.BIG.width("12") == 12 and fonts.TINY.width("12") == 8
    assert fonts.TINY.width("M") == 6       # widened so M and N differ


def test_selected_card_is_underlined_and_unbuyable_dithered() -> None:
    """turn_buy's cards under a one-line notice and a footer: the cards fill rows 30..57; card 1
    (x 43..84) has the selection bar on rows 56..57 and no frame; card 0's
    picture (rows 31..45) is a checkerboard (no two horizontally adjacent lit
    pixels), card 2's is solid squares."""
    image = render(Screen("turn", players=(GREEN, YELLOW), notice="Green: pay 7",
                          patches=SCREENS["turn_buy"].patches, footer="NEXT:choose OK:buy"))
    assert all(_lit(image, x, y) for x in range(43, 85) for y in (56, 57))
    assert not any(_lit(image, x, y) for x in (*range(0, 43), *range(85, 128)) for y in (56, 57))
    assert not any(_lit(image, 43, y) or _lit(image, 84, y) for y in range(30, 47))
    assert not any(_lit(image, 0, y) or _lit(image, 127, y) for y in range(30, 47))

    def lit(x0: int, x1: int) -> int:
        return sum(_lit(image, x, y) for x in range(x0, x1) for y in range(31, 46))

    def pairs(x0: int, x1: int) -> int:
        return sum(_lit(image, x, y) and _lit(image, x + 1, y)
                   for x in range(x0, x1) for y in range(31, 46))

    assert lit(0, 42) > 20 and pairs(0, 41) == 0
    assert pairs(86, 127) > 20


@pytest.mark.parametrize("footer", ["NEXT:choose OK:buy", ""])
def test_cursor_move_changes_one_display_page(footer: str) -> None:
    """Moving the selection among the offer changes only pixel rows of one
    8-row page of the display (the bar's), so the page-diff OLED sends little."""
    cards = SCREENS["turn_buy"].patches
    images = [render(Screen("turn", players=(GREEN, YELLOW), footer=footer,
                            patches=tuple(replace(c, selected=i == k) for i, c in enumerate(cards))))
              for k in range(len(cards))]
    for before, after in zip(images, images[1:]):
        box = ImageChops.difference(before.convert("L"), after.convert("L")).getbbox()
        assert box is not None
        assert box[1] // 8 == (box[3] - 1) // 8, f"a cursor move changes rows {box[1]}..{box[3] - 1}"


def test_draw_patch_button_cell_is_hollow_with_dot() -> None:
    """("O#",) at 6 px squares: a ring with a 2x2 dot, then a filled square."""
    image = Image.new("1", (13, 6))
    from PIL import ImageDraw
    box = draw_patch(ImageDraw.Draw(image), (0, 0, 13, 6), ("O#",))
    assert box == (0, 0, 13, 6)
    rows = ["".join("#" if _lit(image, x, y) else "." for x in range(13)) for y in range(6)]
    assert rows == ["######.######",
                    "#....#.######",
                    "#.##.#.######",
                    "#.##.#.######",
                    "#....#.######",
                    "######.######"]


def test_draw_patch_refuses_ragged_shape() -> None:
    from PIL import ImageDraw
    with pytest.raises(ValueError, match="equal, non-empty rows"):
        draw_patch(ImageDraw.Draw(Image.new("1", (10, 10))), (0, 0, 10, 10), ("##", "#"))


def test_label_width_and_income() -> None:
    """"10(b)5(t)" is 32 px lit; the income adds a 2 px gap and "+3" (7 px)
    in the tiny font, only when the whole label fits."""
    from PIL import ImageDraw
    assert label_width(10, 5, 0) == 11 + 1 + 7 + 1 + 1 + 5 + 1 + 5
    assert label_width(10, 5, 3) == 32 + 2 + 7
    image = Image.new("1", (64, 10))
    assert draw_label(ImageDraw.Draw(image), (0, 0), 10, 5, 3, max_width=40) == 32
    assert image.getbbox() == (0, 1, 32, 8)
    assert draw_label(ImageDraw.Draw(image), (0, 0), 10, 5, 3) == 41
    assert image.getbbox() == (0, 1, 41, 8)


if __name__ == "__main__":
    # Write 4x copies of the golden screens for viewing: /tmp/oled-golden/*.png
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/oled-golden")
    out.mkdir(parents=True, exist_ok=True)
    for key, value in SCREENS.items():
        render(value, PAGED[key][1] if key in PAGED else 0).convert("L").resize((512, 256), Image.NEAREST).save(out / f"{key}.png")
    print(f"wrote {len(SCREENS)} images to {out}")


def test_pager_turns_the_pages_every_few_seconds():
    """A two-page screen starts on page 1 at the first frame, shows page 2
    PAGE_SECONDS later and page 1 again after that; a one-page screen never
    asks for another frame."""
    from firmware_py.view.oled import PAGE_SECONDS, Pager, page_count
    assert page_count(UNDO) == 2
    pager = Pager(UNDO)
    first = pager.frame(100.0)
    assert first.tobytes() == render(UNDO, 0).tobytes()
    assert pager.next_at(100.0) == 100.0 + PAGE_SECONDS
    assert pager.frame(100.0 + PAGE_SECONDS + 0.1).tobytes() == render(UNDO, 1).tobytes()
    assert pager.frame(100.0 + 2 * PAGE_SECONDS).tobytes() == first.tobytes()
    still = Pager(SCREENS["choose"])
    still.frame(5.0)
    assert still.pages == 1 and still.next_at(5.0) is None
