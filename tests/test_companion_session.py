"""The game session: groups, undo, corrections and the saved record."""
from __future__ import annotations

import pytest

from firmware_py.companion.session import Correction, Session, Setup
from firmware_py.rules import ADVANCE, Buy, IllegalActionError, deal, load_spec, replay


def _setup(free=False, game="patchwork"):
    circle, blue = deal(load_spec(game), 5)
    return Setup(game, "2014" if game == "patchwork" else "standard", "yellow", circle, blue, free)


def test_undo_restores_the_previous_state_exactly():
    s = Session(_setup())
    start = s.state
    s.commit([ADVANCE])
    after = s.state
    s.commit([Buy(s.state.offer[0])])
    assert s.undo() is not None and s.state == after
    assert s.undo() is not None and s.state == start
    assert s.undo() is None


def test_rejected_group_changes_nothing():
    s = Session(_setup())
    s.commit([ADVANCE])
    before = (s.state, list(s.groups))
    with pytest.raises(IllegalActionError):
        s.commit([Buy(s.state.circle[5])])          # not on offer (R3)
    assert (s.state, s.groups) == before


def test_corrections_change_buttons_and_go_to_meta():
    s = Session(_setup())
    s.commit([Correction(1, 3)])
    assert s.state.players[1].buttons == 8
    record = s.record()
    assert record.players == ("Yellow", "Green") and record.moves == ()
    assert record.meta["corrections"] == [{"player": 1, "delta": 3, "after_move": 0}]


def test_free_layout_buys_any_patch_and_its_record_replays():
    s = Session(_setup(free=True))
    spec = s.state.spec
    cheap = [p.id for p in spec.patches if p.cost <= 2 and p.id != spec.smallest_patch]
    s.commit([Buy(cheap[-1])])                      # far from the front of the dealt circle
    s.commit([ADVANCE])
    s.commit([Buy(cheap[0])])
    record = s.record()
    assert record.meta["layout"] == "free" and record.circle[:1] == (cheap[-1],)
    state, _ = replay(record)
    assert state.players == s.state.players


def test_journal_form_round_trips():
    s = Session(_setup(game="patchwork-express"))
    group = [ADVANCE]
    s.commit(group)
    items = s.group_to_json(group)
    assert s.group_from_json(items) == tuple(group)
