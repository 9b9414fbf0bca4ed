"""The table's face: inputs return effects, everything else reads a frozen TableView.

The table does no I/O, reads no clock and starts no thread; outside the table's own
modules nothing reads a table attribute but its view (and hands it inputs).
"""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from firmware_py.companion.buttons import HOLD, PRESS, Gesture
from firmware_py.companion.effects import AskBox, ForgetReading, Journal, SaveRecord
from firmware_py.companion.table import HANDLERS, Table
from firmware_py.companion.tokens import MOVE, STILL, Verdict
from firmware_py.companion.view import Mode, TableView
from firmware_py.rules import ADVANCE, deal, load_spec

PACKAGE = Path(__file__).resolve().parents[2] / "firmware_py"
TABLE_MODULES = {"table.py", "table_setup.py", "table_play.py", "table_menu.py",
                 "table_expect.py", "box_table.py", "view.py", "effects.py"}
INPUTS = {"view", "gesture", "verdict", "box_answer", "resume", "sensor_status", "record_saved"}


def press(table: Table, button: str, times: int = 1) -> list:
    effects = []
    for _ in range(times):
        effects += table.gesture(Gesture(button, PRESS), "2026-12-02T10:00:00+00:00")
    return effects


def new_game(table: Table) -> list:
    """Patchwork, 2014 board, green first, dealt: the effects of the last OK."""
    press(table, "ok", 3)                     # Patchwork, 2014 board, green starts
    effects = press(table, "ok")              # deal it
    while table.view().mode == Mode.DEAL:
        effects += press(table, "ok")
    return effects


def test_every_mode_has_its_handler_and_modes_are_their_names():
    assert set(HANDLERS) == set(Mode)
    assert Mode.TURN == "turn" and str(Mode.SETUP_GAME) == "setup_game"


def test_the_view_is_frozen_and_does_not_follow_the_table():
    table = Table(lambda game: deal(load_spec(game), 3))
    before = table.view()
    with pytest.raises(dataclasses.FrozenInstanceError):
        before.mode = Mode.TURN
    with pytest.raises(TypeError):
        before.choice["game"] = "patchwork"
    press(table, "next")
    assert before.cursor == 0 and table.view().cursor == 1


def test_a_new_game_is_journalled_and_the_board_forgotten_in_that_order():
    table = Table(lambda game: deal(load_spec(game), 3))
    effects = new_game(table)
    assert [type(e) for e in effects] == [Journal, ForgetReading]
    assert effects[0].body["kind"] == "setup"
    assert effects[0].body["setup"]["started"] == "2026-12-02T10:00:00+00:00"
    view = table.view()
    assert isinstance(view, TableView) and view.mode == Mode.TURN and view.session.groups == ()


def test_a_move_is_journalled_and_an_undo_forgets_the_board():
    table = Table(lambda game: deal(load_spec(game), 3))
    new_game(table)
    state = table.view().state
    target = state.players[1].position + 1                 # green advances past yellow
    assert table.verdict(Verdict(STILL)) == []
    assert table.verdict(Verdict(MOVE, target)) == []      # from a shared space: asked
    assert table.view().mode == Mode.CONFIRM and ADVANCE in table.view().candidates
    press(table, "next", table.view().candidates.index(ADVANCE))
    effects = press(table, "ok")
    assert [type(e) for e in effects] == [Journal]
    assert effects[0].body["kind"] == "turn" and effects[0].body["moves"] == ["advance"]
    undo = table.gesture(Gesture("back", HOLD))
    assert [type(e) for e in undo] == [Journal, ForgetReading]
    assert undo[0].body == {"kind": "undo"} and table.view().turns == 0


def test_ending_the_game_journals_the_end_before_asking_for_the_record():
    table = Table(lambda game: deal(load_spec(game), 3))
    new_game(table)
    table.gesture(Gesture("ok", HOLD))                    # the menu
    items = table.view().menu
    press(table, "next", items.index("End game now"))
    press(table, "ok")
    effects = press(table, "next") + press(table, "ok")   # "Yes, end and save"
    assert [type(e) for e in effects] == [Journal, SaveRecord]
    assert effects[0].body["kind"] == "end"
    assert effects[1].game.ended == "2026-12-02T10:00:00+00:00"
    assert table.view().mode == Mode.END and table.view().saved_to == ""
    table.record_saved("/records/game.json")              # the loop's outcome
    assert table.view().saved_to == "/records/game.json"


def test_the_box_is_asked_through_an_effect():
    table = Table(lambda game: deal(load_spec(game), 3), can_think=True)
    press(table, "ok", 2)                                 # Patchwork, 2014 board
    press(table, "next")
    press(table, "ok")                                    # Box (easy)
    press(table, "next")
    press(table, "ok")                                    # the box starts
    effects = press(table, "next") + press(table, "ok")   # a free layout: the game starts
    asks = [e for e in effects if isinstance(e, AskBox)]
    assert len(asks) == 1 and table.view().mode == Mode.BOX
    assert table.view().box.wanted == asks[0].request.key and table.view().box.waiting


def test_without_a_sensor_ok_takes_the_move():
    table = Table(lambda game: deal(load_spec(game), 3))
    new_game(table)
    table.sensor_status(False)
    press(table, "next")
    effects = press(table, "ok")
    assert [type(e) for e in effects] == [Journal] and table.view().turns == 1


def _table_modules() -> list[Path]:
    return [PACKAGE / "companion" / name for name in sorted(TABLE_MODULES)]


def test_the_table_does_no_io_reads_no_clock_and_starts_no_thread():
    banned = {"os", "io", "time", "datetime", "threading", "socket", "pathlib", "random",
              "subprocess", "sqlite3", "logging"}
    for path in _table_modules():
        tree = ast.parse(path.read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                 for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and not n.level}
        assert not names & banned, (path.name, names & banned)


def _table_reads(source: str) -> set[str]:
    """Attributes read on an object called ``table`` or ``*.table`` (``x.table.mode``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            inner = node.value
            named = (isinstance(inner, ast.Name) and inner.id == "table") or \
                (isinstance(inner, ast.Attribute) and inner.attr == "table")
            if named:
                found.add(node.attr)
    return found


def _imports_the_table(source: str) -> bool:
    """True when a module imports ``companion.table`` (the Table itself)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("companion.table"):
            return True
    return False


def test_outside_the_table_nothing_reads_the_table_but_its_view():
    """Every module holding a Table (it imports it) hands it inputs and reads its view;
    none reads the table's own attributes, and none but the table's imports its parts."""
    holders, wrong = [], {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "companion" and path.name in TABLE_MODULES:
            continue
        source = path.read_text()
        if _imports_the_table(source):
            holders.append(path.name)
            extra = _table_reads(source) - INPUTS
            if extra:
                wrong[str(path.relative_to(PACKAGE))] = sorted(extra)
        for part in ("table_play", "table_menu", "table_expect", "box_table"):
            if f".{part} import" in source or f"companion.{part}" in source:
                wrong.setdefault(str(path.relative_to(PACKAGE)), []).append(part)
    assert "loop.py" in holders and wrong == {}


def test_the_reader_of_table_attributes_sees_them():
    """Control: the check above finds a read of the table's internals."""
    assert _table_reads("x = self.table.session\ny = table.mode\nself.table.view()\n") \
        == {"session", "mode", "view"}
