"""Every screen and message the table shows fits the 128x64 OLED whole.

The real TableRig is driven by button gestures and token verdicts through
every mode (setup, deal, turns, confirm, leather, menu, corrections, the end)
in whole games of both kinds, both colours starting, dealt and free layouts;
the notices are also built for every event combination one move can produce,
with the largest numbers. Each screen is rendered page by page and the
renderer's own report (``view.oled.problems``: cut text, dropped rows,
overlapping text) must be empty.
"""
from __future__ import annotations

import random
import re

import pytest
from PIL import ImageChops

from firmware_py.companion import intents
from firmware_py.companion.buttons import HOLD, PRESS, Gesture
from firmware_py.companion.model import Screen
from firmware_py.companion.screens import build_screen
from firmware_py.companion.tokens import MISMATCH, MOVE, ONTO, Verdict
from table_helpers import TableRig
from firmware_py.rules import (Advance, Buy, ButtonsEarned, IncomePaid, LeatherDiscarded,
                               LeatherPlaced, LeatherWon, PatchBought, SpecialTileAwarded,
                               TokenMoved, deal, legal_actions, load_spec)
from firmware_py.view.oled import page_count, problems, render

COLOURS = (("green", "yellow"), ("yellow", "green"))
WARNINGS = ("sensor offline", "not saving: disk full (/var/lib/patchwork-companion/journal)",
            "record not saved: No space left on device / sensor offline / LEDs failed",
            "journal: 3 bad lines skipped; resumed at turn 15 / oled failed: OSError")


class Seen:
    """Collects every distinct screen the UI shows, with where it came from."""

    def __init__(self):
        self.screens: dict[Screen, str] = {}

    def look(self, ui: TableRig, where: str) -> Screen:
        screen = build_screen(ui.view(), ui.warnings.values())
        self.screens.setdefault(screen, where)
        return screen

    def bad(self) -> list[str]:
        out = []
        for screen, where in self.screens.items():
            for problem in problems(screen):
                out.append(f"{where}: {problem}  [{screen.title!r} {screen.notice!r} "
                           f"{screen.lines!r}]")
        return out


def press(ui: TableRig, button: str, times: int = 1) -> None:
    for _ in range(times):
        ui.gesture(Gesture(button, PRESS))


def hold(ui: TableRig, button: str) -> None:
    ui.gesture(Gesture(button, HOLD))


def new_ui(seed: int) -> TableRig:
    return TableRig(lambda _body: None, lambda game: deal(load_spec(game), seed),
                   lambda _session: "/var/lib/patchwork-companion/records/2026-12-01-1400.json")


def start(ui: TableRig, seen: Seen, game: int, board: int, first: int, free: bool) -> None:
    """Walk the setup questions (looking at each, with each option under the cursor)."""
    for count, choice, label in ((2, game, "which game"), (2, board, "time board"),
                                 (2, first, "who starts"), (2, int(free), "layout")):
        if label == "time board" and game == 1:
            continue
        for _ in range(count):
            seen.look(ui, label)
            press(ui, "next")
        press(ui, "next", choice)
        press(ui, "ok")
    if not free:
        total = len(ui.choice["circle"])
        for _ in range(total - 1):
            seen.look(ui, "deal")
            press(ui, "next")
        seen.look(ui, "deal (last)")
        press(ui, "ok")
    assert ui.mode in ("turn", "leather")


def survey_turn(ui: TableRig, seen: Seen, rng: random.Random) -> None:
    """Look at the turn screen with each option under the cursor, a refusal,
    an armed choice, a confirm question and a mismatch, then leave it as it was."""
    state = ui.state
    seen.look(ui, "turn")
    options = intents.turn_options(state)
    for i in range(len(options)):
        press(ui, "next")
        seen.look(ui, f"turn, option {i + 1} chosen")
        if intents.why_not(state, ui.intent):
            press(ui, "ok")                    # refused: says why
            seen.look(ui, "turn, refused")
            press(ui, "back")
    press(ui, "back")
    legal = [a for a in legal_actions(state) if isinstance(a, (Buy, Advance))]
    if rng.random() < 0.3:
        targets = sorted({intents.target_of(state, a) for a in legal})
        for target in targets:
            found = intents.candidates_at(state, target)
            if len(found) > 1:
                ui.verdict(Verdict(ONTO, target))
                if ui.mode == "confirm":
                    for _ in found:
                        seen.look(ui, "confirm")
                        press(ui, "next")
                    press(ui, "back")          # no: move it back
                    seen.look(ui, "turn after a refused confirm")
                break
        survey_readings(ui, seen, targets)
        mover = state.to_move
        here = state.players[mover].position
        ui.verdict(Verdict(MISMATCH, expected=frozenset({here, state.players[1 - mover].position}),
                           wrong=frozenset({min(here + 9, state.spec.last_space)})))
        seen.look(ui, "mismatch")
        ui.verdict(Verdict("still"))


def survey_readings(ui: TableRig, seen: Seen, targets: list[int]) -> None:
    """The first "1 move or 2?" this turn allows (a stop on a target, then a space
    that one move or several reach): each reading under the cursor, then BACK."""
    state = ui.state
    for stop in targets:
        for space in range(stop + 1, state.spec.last_space + 1):
            found = intents.readings(state, (stop,), space)
            if len(found) > 1 and len(found[-1]) > 1:
                ui.verdict(Verdict(MOVE, space, stops=(stop,)))
                assert ui.mode == "confirm" and list(ui.readings) == found
                for _ in found:
                    seen.look(ui, "one move or two")
                    press(ui, "next")
                press(ui, "back")
                return


def play_turn(ui: TableRig, rng: random.Random) -> None:
    """Make one legal move the way the table does: NEXT to it, OK, OK."""
    state = ui.state
    legal = [a for a in legal_actions(state) if isinstance(a, (Buy, Advance))]
    buys = [a for a in legal if isinstance(a, Buy)]
    action = rng.choice(buys) if buys and rng.random() < 0.8 else Advance()
    options = intents.turn_options(state)
    press(ui, "next", options.index(action) + 1)
    press(ui, "ok")
    if ui.armed:                               # with the sensor, OK twice also plays
        press(ui, "ok")


def survey_menu(ui: TableRig, seen: Seen) -> None:
    """Every menu entry and the questions behind them (all left with BACK)."""
    hold(ui, "ok")
    items = ui.menu
    for _ in items:
        seen.look(ui, "menu")
        press(ui, "next")
    for item, mode in (("Claim 7x7 tile", "claim"), ("Correct buttons", "correct_who"),
                       ("End game now", "end_confirm")):
        if item not in items:
            continue
        press(ui, "next", items.index(item))
        press(ui, "ok")
        assert ui.mode == mode
        seen.look(ui, mode)
        press(ui, "next")
        seen.look(ui, mode)
        if mode == "correct_who":
            press(ui, "ok")
            press(ui, "next", 150)             # the largest numbers
            seen.look(ui, "correct_amount")
            hold(ui, "back")
        else:
            press(ui, "back")
        hold(ui, "ok")
    press(ui, "back")


def play_game(seen: Seen, seed: int, game: int, first: int, free: bool, board: int = 0,
              end_early: bool = False) -> TableRig:
    rng = random.Random(seed)
    ui = new_ui(seed)
    start(ui, seen, game, board, first, free)
    turn = 0
    while ui.mode != "end":
        turn += 1
        for warning in WARNINGS[:1 + turn % 4] if turn % 7 == 0 else ():
            ui.warnings[warning] = warning
        if ui.mode == "leather":
            seen.look(ui, "leather")
            press(ui, rng.choice(("ok", "next")))
        else:
            survey_turn(ui, seen, rng)
            if turn % 11 == 0:
                survey_menu(ui, seen)
            play_turn(ui, rng)
        seen.look(ui, "after a move")
        if turn % 5 == 0 and ui.mode != "end":
            hold(ui, "back")                   # undo: says what to give back
            seen.look(ui, "after undo")
            play_turn(ui, rng) if ui.mode == "turn" else press(ui, "ok")
            seen.look(ui, "after the move again")
        ui.warnings.clear()
        if end_early and turn == 9:
            hold(ui, "ok")
            press(ui, "next", ui.menu.index("End game now"))
            press(ui, "ok")
            press(ui, "next")
            press(ui, "ok")
        assert turn < 400
    seen.look(ui, "end")
    ui.warnings["record"] = "record not saved: Read-only file system"
    seen.look(ui, "end, not saved")
    return ui


@pytest.mark.parametrize("game", [0, 1], ids=["patchwork", "express"])
def test_every_screen_of_whole_games_fits(game):
    seen = Seen()
    for seed, first, free in ((1, 0, False), (2, 1, True), (3, 0, True), (4, 1, False)):
        play_game(seen, seed, game, first, free, board=seed % 2)
    play_game(seen, 5, game, 0, False, end_early=True)
    kinds = {s.kind for s in seen.screens}
    assert kinds == {"choose", "deal", "turn", "prompt", "mismatch", "end"}
    assert any(s.notice.startswith(("Green: ", "Yellow: ")) for s in seen.screens)
    assert any(s.kind == "turn" and s.patches and s.patches[0].total for s in seen.screens)
    words = [" ".join((s.title, *s.lines, *s.options, s.notice, s.footer)).lower()
             for s in seen.screens]
    assert not any(re.search(r"player ?[01]", w) for w in words)   # colours, never numbers
    assert any(s.title == "1 move or 2?" for s in seen.screens)
    assert seen.bad() == []


def _events_of_one_move():
    """Every combination of what one move can cause, with the largest numbers."""
    combos = []
    for p in (0, 1):
        buy = [PatchBought(p, 1, 10), TokenMoved(p, 47, 53)]
        advance = [ButtonsEarned(p, 52), TokenMoved(p, 0, 53)]
        incomes = [IncomePaid(p, 47, 29), IncomePaid(p, 53, 29)]
        leathers = [LeatherWon(p, s) for s in (20, 26, 32, 44, 50)]
        for move in (buy, advance):
            for income in (incomes[:0], incomes[:1], incomes):
                for leather in (leathers[:0], leathers[:1], leathers):
                    extra = ([LeatherPlaced(p, None)] * len(leather)
                             if leather and move is buy else [LeatherDiscarded(p)] * len(leather))
                    combos.append(move + income + leather + extra)
                    combos.append(move + income + leather + [SpecialTileAwarded(p)])
        combos.append([SpecialTileAwarded(p)])
        combos.append([LeatherPlaced(p, 3)])
        combos.append([LeatherDiscarded(p)])
    return combos


@pytest.mark.parametrize("game", ["patchwork", "patchwork-express"])
@pytest.mark.parametrize("colours", COLOURS, ids=["green-first", "yellow-first"])
def test_every_notice_and_undo_message_fits(game, colours):
    """The instruction after any move and the undo message for it, on the turn
    screen (with and without a warning, with the dotted-picture tip) and on the
    end screen."""
    seen = Seen()
    ui = new_ui(7)
    start(ui, Seen(), 0 if game == "patchwork" else 1, 0, colours.index("green"), False)
    state = ui.state
    for events in _events_of_one_move():
        player = next(e.player for e in events)
        ui.table.instruction = intents.notices(events, colours)
        if isinstance(events[0], (LeatherPlaced, LeatherDiscarded)):
            assert ui.instruction == ""      # the leather patch was taken with the move
            continue
        assert ui.instruction.startswith(colours[player].capitalize() + ": ")
        for tip in ("", "Dotted picture: can't buy it now"):
            ui.table.tip = tip
            seen.look(ui, "notice")
            ui.warnings["sensor"] = "sensor offline"
            seen.look(ui, "notice + warning")
            ui.warnings.clear()
        ui.table.tip = ""
        ui.table.instruction = intents.undo_notice(events, state, colours, player)
        assert ui.instruction.startswith(colours[player].capitalize() + ": ")
        seen.look(ui, "undo")
        ui.table.mode = "end"
        ui.table.instruction = intents.notices(events, colours)
        seen.look(ui, "end")
        ui.table.mode = "turn"
    assert len(seen.screens) > 50
    assert seen.bad() == []


def test_the_clipping_check_catches_what_does_not_fit():
    """The check can fail: a title with no shorter form, a word wider than the
    screen, a label without room for its income and overlapping text are all
    reported; a long notice is paged, not cut."""
    from firmware_py.companion.model import PatchCard, PlayerLine
    assert problems(Screen("choose", title="New game: which game?", options=("a",)))
    assert problems(Screen("prompt", title="x", lines=("W" * 30,)))
    wide = PatchCard(1, ("##",), 10, 6, 3)
    assert not problems(Screen("turn", patches=(wide,)))
    assert problems(Screen("turn", patches=(PatchCard(1, ("##",), 100, 16, 13),)))
    crowded = PlayerLine("Yellowish", "yellow", 1, 1000, 12, 0, False, 1000)
    assert problems(Screen("turn", players=(crowded,)))
    huge = PlayerLine("G", "green", 1, 10 ** 12, 1, 0, False, 10 ** 12)
    assert any("off the screen" in p for p in problems(Screen("end", players=(huge,))))
    long = "Green: pay 10, take 5 leather, +58 income, take special tile"
    screen = Screen("turn", notice=long, footer="NEXT:choose OK:buy")
    assert page_count(screen) > 1 and problems(screen) == []
    assert render(screen, 0).tobytes() != render(screen, 1).tobytes()


def test_cursor_moves_on_the_turn_screen_change_one_display_page() -> None:
    """NEXT through every option of a turn (three patches, then advance)
    changes only pixel rows of one 8-row page of the display: the selection
    bar under a card and, for the advance, the legend ("OK:advance to 2")."""
    ui = new_ui(3)
    start(ui, Seen(), 0, 0, 0, False)
    before = build_screen(ui.view(), ui.warnings.values())
    footers = []
    for _ in intents.turn_options(ui.state):
        press(ui, "next")
        after = build_screen(ui.view(), ui.warnings.values())
        footers.append(after.footer)
        box = ImageChops.difference(render(before).convert("L"),
                                    render(after).convert("L")).getbbox()
        assert box is not None and box[1] // 8 == (box[3] - 1) // 8, \
            f"a cursor move changes rows {box[1]}..{box[3] - 1}" if box else "nothing changed"
        before = after
    assert footers[-1] == "NEXT:choose OK:advance to 1" and footers[0] == "NEXT:choose OK:buy"
