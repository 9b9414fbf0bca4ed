"""The game session: groups, undo, corrections and the saved record."""
from __future__ import annotations

import dataclasses
import re
from datetime import datetime

import pytest

from firmware_py.companion.session import Correction, Session, Setup, now_text
from firmware_py.rules import (ADVANCE, AdjustError, Buy, IllegalActionError, deal, dumps_record,
                               load_spec, parse_record, replay, tally)


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


def test_a_correction_is_recorded_where_it_was_made_and_replays_to_the_table_tally():
    s = Session(_setup())
    s.commit([ADVANCE])
    s.commit([Correction(1, 3)])
    s.commit([ADVANCE])
    s.commit([Correction(0, -1)])
    record = s.record()
    assert record.players == ("Yellow", "Green")
    assert list(record.moves) == ["advance", {"adjust": 1, "buttons": 3}, "advance",
                                  {"adjust": 0, "buttons": -1}]
    assert "corrections" not in record.meta
    state, result = replay(parse_record(dumps_record(record)))
    assert state.players == s.state.players
    assert result.scores == tally(s.state).scores


def test_a_correction_below_zero_buttons_is_refused_and_changes_nothing():
    s = Session(_setup())
    before = s.state
    with pytest.raises(AdjustError):
        s.commit([Correction(0, -6)])                # holds 5
    assert s.state == before and s.groups == []


def test_free_layout_buys_any_patch_and_its_record_replays():
    s = Session(_setup(free=True))
    spec = s.state.spec
    cheap = [p.id for p in spec.patches if p.cost <= 2 and p.id != spec.smallest_patch]
    s.commit([Buy(cheap[-1])])                      # far from the front of the dealt circle
    s.commit([ADVANCE])
    s.commit([Buy(spec.smallest_patch)])            # the smallest patch, long before the end
    s.commit([Buy(cheap[0])])
    record = s.record()
    assert record.layout == "free" and record.circle == s.setup.circle
    assert dumps_record(record).count('"layout":"free"') == 1
    state, _ = replay(parse_record(dumps_record(record)))
    assert state.players == s.state.players
    left = [p for p in s.setup.circle if p not in (cheap[-1], spec.smallest_patch, cheap[0])]
    assert list(state.circle) == left               # the pool keeps the record's order


def test_record_meta_says_when_and_by_what():
    times = iter(["2026-12-01T19:04:00+01:00", "2026-12-01T19:41:30+01:00"])
    setup = _setup()
    s = Session(dataclasses.replace(setup, started=next(times)))
    s.commit([ADVANCE])
    meta = s.record().meta
    assert meta["started"] == "2026-12-01T19:04:00+01:00" and "ended" not in meta
    assert meta["app"].startswith("patchwork-companion")
    s.ended = next(times)
    meta = s.record(meta={"place": "club"}).meta
    assert (meta["ended"], meta["duration_s"], meta["place"]) == ("2026-12-01T19:41:30+01:00",
                                                                 2250, "club")


def test_now_text_is_rfc3339_with_its_utc_offset():
    text = now_text()
    parsed = datetime.fromisoformat(text)
    assert parsed.utcoffset() is not None and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", text), text


def test_journal_reads_the_older_correction_form():
    s = Session(_setup())
    assert s.group_from_json([{"correct": 1, "delta": 2}]) == (Correction(1, 2),)
    assert s.group_to_json([Correction(1, 2)]) == [{"adjust": 1, "buttons": 2}]
    with pytest.raises(ValueError):
        s.group_from_json([{"adjust": 1, "buttons": 0}])


def test_journal_form_round_trips():
    s = Session(_setup(game="patchwork-express"))
    group = [ADVANCE]
    s.commit(group)
    items = s.group_to_json(group)
    assert s.group_from_json(items) == tuple(group)
