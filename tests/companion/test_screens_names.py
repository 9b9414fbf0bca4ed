"""One vocabulary: where the players' names are known, the OLED names them in the
title, the notices and the tally alike (the rows already did), never their colours;
without names, the colours."""
from __future__ import annotations

from firmware_py.companion.screens import build_screen
from table_helpers import TableRig
from table_helpers import ui_after
from test_faults_rig import GOLDEN_RECORDS


def _ui(names=(), turns: int = 6) -> TableRig:
    return ui_after(GOLDEN_RECORDS[2], turns, names)


def _words(screen) -> str:
    rows = " ".join(p.name for p in screen.players)
    return " | ".join([screen.title, screen.notice, *screen.lines, *screen.options, rows])


def test_a_turn_names_the_player_in_the_title_and_the_rows():
    ui = _ui(("Ann", "Bob"))
    screen = build_screen(ui.view(), ui.warnings.values())
    mover = ui.session.setup.seat_names()[ui.state.to_move]
    assert screen.title == f"{mover}'s turn"
    words = _words(screen)
    assert "Green" not in words and "Yellow" not in words, words


def test_an_instruction_after_a_move_names_the_player():
    from firmware_py.rules import ADVANCE
    ui = _ui(("Ann", "Bob"))
    mover = ui.session.setup.seat_names()[ui.state.to_move]
    ui.table.play(ADVANCE)                          # as when the token reached its space
    said = ui.instruction or ui.notice
    assert said.startswith(f"{mover}: take "), said


def test_without_names_the_colours_are_the_names():
    ui = _ui(())
    screen = build_screen(ui.view(), ui.warnings.values())
    colour = ui.session.setup.colours[ui.state.to_move].capitalize()
    assert screen.title == f"{colour}'s turn"


def test_the_tally_title_names_the_winner_like_its_rows():
    from firmware_py.rules import tally
    record = GOLDEN_RECORDS[2]
    ui = _ui(("Ann", "Bob"), turns=len(record.moves))
    ui.table.finish() if ui.mode != "end" else None
    screen = build_screen(ui.view(), ui.warnings.values())
    winner = ui.session.setup.seat_names()[tally(ui.state).winner]
    assert screen.kind == "end" and screen.title.startswith(winner), screen.title
    assert {p.name for p in screen.players} == {"Ann", "Bob"}
