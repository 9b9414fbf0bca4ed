"""Player names: chosen at setup from the stored names (NEXT/OK, Green/Yellow by default),
kept in the journal and the record; the names file itself."""
from __future__ import annotations

import json

import pytest

from firmware_py.companion.buttons import PRESS, Gesture
from firmware_py.companion.names import NamesError, clean, load_names, offered, save_names
from firmware_py.companion.screens import build_screen, player_lines
from table_helpers import TableRig
from firmware_py.rules import load_spec, deal


def _ui(known):
    entries = []
    ui = TableRig(entries.append, lambda game: deal(load_spec(game), 5), lambda session: "")
    ui.known_names = lambda: list(known)
    return ui, entries


def press(ui, *buttons):
    for b in buttons:
        ui.gesture(Gesture(b, PRESS))


def test_names_are_chosen_at_setup_and_kept_in_journal_and_record():
    ui, entries = _ui(["Anna", "Ben"])
    press(ui, "ok", "ok", "ok")                      # Patchwork, 2014 board, Green starts
    assert ui.mode == "setup_names"
    screen = build_screen(ui.view(), ui.warnings.values())
    assert (screen.title, screen.options) == ("Green player is", ("Green", "Anna", "Ben"))
    press(ui, "next", "ok")                          # Green is Anna
    screen = build_screen(ui.view(), ui.warnings.values())
    assert (screen.title, screen.options) == ("Yellow player is", ("Yellow", "Ben"))
    press(ui, "back")                                # back to Green's name
    assert build_screen(ui.view(), ui.warnings.values()).title == "Green player is"
    press(ui, "next", "ok", "next", "ok")            # Anna, then Ben
    assert ui.mode == "setup_layout"
    press(ui, "back")                                # back to Yellow's name
    assert build_screen(ui.view(), ui.warnings.values()).title == "Yellow player is"
    press(ui, "next", "ok", "next", "ok")            # Ben, free layout
    assert ui.mode == "turn"
    assert ui.session.setup.names == ("Anna", "Ben")
    assert entries[0]["setup"]["names"] == ["Anna", "Ben"]
    assert [p.name for p in player_lines(ui)] == ["Anna", "Ben"]
    assert ui.session.record().players == ("Anna", "Ben")
    resumed, _ = _ui([])
    resumed.resume(json.loads(json.dumps(entries)))
    assert resumed.session.setup.seat_names() == ("Anna", "Ben")


def test_yellow_starting_puts_yellows_name_first_in_the_record():
    ui, _ = _ui(["Anna"])
    press(ui, "ok", "ok", "next", "ok")              # Yellow starts
    press(ui, "ok")                                  # Green keeps "Green"
    press(ui, "next", "ok")                          # Yellow is Anna
    press(ui, "next", "ok")                          # free layout
    assert ui.session.setup.names == ("Green", "Anna")
    assert ui.session.record().players == ("Anna", "Green")


def test_without_stored_names_setup_has_no_extra_step():
    ui, entries = _ui([])
    press(ui, "ok", "ok", "ok")
    assert ui.mode == "setup_layout"
    press(ui, "next", "ok")
    assert "names" not in entries[0]["setup"]
    assert ui.session.record().players == ("Green", "Yellow")


def test_names_file_round_trip_and_bad_names(tmp_path):
    path = tmp_path / "names.json"
    assert load_names(path) == [] and offered(path) == ["Green", "Yellow"]
    assert save_names(path, [" Anna ", "anna", "Ben  Bo", "", "yellow"]) == ["Anna", "Ben Bo"]
    assert offered(path) == ["Green", "Yellow", "Anna", "Ben Bo"]
    with pytest.raises(NamesError, match="longer than 24"):
        clean(["x" * 25])
    with pytest.raises(NamesError, match="cannot be shown"):
        clean(["a\x07b"])
    path.write_text("not json")
    assert load_names(path) == []


def test_a_finished_game_reaches_the_history_under_the_chosen_names(tmp_path):
    """The last move played at the simulated table: the record is filed with the names
    chosen at setup, and history, statistics and the web page's library show them."""
    from dataclasses import replace

    from firmware_py.service.assembly import start_companion
    from firmware_py.companion.journal import Journal
    from firmware_py.companion.session import Session
    from firmware_py.sim.demo import demo_config
    from firmware_py.rules import untracked_copy
    from firmware_py.sim.hands import Hands
    from firmware_py.sim.player import TablePlayer
    from firmware_py.web.library import Library
    from table_helpers import groups
    from test_faults_rig import GOLDEN_RECORDS, wait_until
    record = GOLDEN_RECORDS[3]
    plan = untracked_copy(record).moves
    setup, turns = groups(record, len(plan) - 1)
    setup = replace(setup, names=("Anna", "Ben"))          # Green is Anna, Yellow is Ben
    journal = Journal(tmp_path)
    journal.load()
    journal.append({"kind": "setup", "setup": setup.to_json()})
    session = Session(setup)
    for group in turns:
        journal.append({"kind": "turn", "moves": session.group_to_json(group)})
        session.commit(group)
    done = len(session.record().moves)
    companion = start_companion(demo_config(fast=True), folder=tmp_path)
    try:
        hands = Hands(companion, timeout=15)
        state = companion.service.call(lambda: companion.service.view.state)
        hands.place_tokens([p.position for p in state.players])
        hands.await_board({p.position for p in state.players})
        player = TablePlayer(hands, record)
        for index in range(done, len(plan)):
            player.step(index, plan[index])
        wait_until(lambda: Library(tmp_path).count() == 1, "the game in the history", timeout=10)
    finally:
        companion.close()
    rows, total = Library(tmp_path).games("Anna", None, 10, 0)
    expected = setup.seat_names()
    assert total == 1 and [p["name"] for p in rows[0]["players"]] == list(expected)
    assert sorted(Library(tmp_path).player_names()) == ["Anna", "Ben"]
    assert sorted(p["name"] for p in Library(tmp_path).stats()["players"]) == ["Anna", "Ben"]


def test_a_hostile_names_file_offers_the_defaults_only(tmp_path):
    """A deeply nested or mistyped names.json (restored, or edited by hand) never breaks the
    set-up: the defaults are offered."""
    from firmware_py.companion.names import offered
    path = tmp_path / "names.json"
    for text in ('{"names": ' + "[" * 5000 + "]" * 5000 + "}", '{"names": 5}', '[1, 2]',
                 '{"names": [["Anna"]]}', '{"names": ["Anna", 3]}'):
        path.write_text(text)
        assert offered(path) == ["Green", "Yellow"], text
