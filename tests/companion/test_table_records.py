"""What the table saves: corrections where they were made, the tally the table
showed, and when/by what the game was played (a real Service, its journal and
records on disk; inputs posted as the hardware threads post them, time stepped)."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from firmware_py.companion.model import GREEN, YELLOW
from firmware_py.rules import parse_record, replay

from test_faults_rig import GOLDEN_RECORDS, StepClock, TableDriver, service_for


def _menu(driver: TableDriver, item: str) -> None:
    driver.hold("ok")
    view = driver.view()
    assert view.mode == "menu", view.mode
    for _ in range(view.menu.index(item)):
        driver.press("next")
    driver.press("ok")


def _correct(driver: TableDriver, colour: str, delta: int) -> None:
    _menu(driver, "Correct buttons")
    if (GREEN, YELLOW).index(colour):
        driver.press("next")
    driver.press("ok")
    for _ in range(abs(delta)):
        driver.press("next" if delta > 0 else "back")
    driver.press("ok")
    assert driver.view().mode == "turn"


def test_corrections_are_saved_where_made_and_replay_to_the_tally_shown(tmp_path):
    record = GOLDEN_RECORDS[0]
    clock = StepClock()
    service = service_for(tmp_path / "journal", record, clock)
    try:
        driver = TableDriver(service, clock, record)
        driver.play(stop_when=lambda v: len(v.moves) >= 4)
        yellow = service.call(lambda: service.view.session.setup.colours.index(YELLOW))
        before = driver.view().state.players[yellow].buttons
        _correct(driver, YELLOW, +3)
        _correct(driver, GREEN, -2)
        assert driver.view().state.players[yellow].buttons == before + 3
        _menu(driver, "End game now")
        driver.press("next")                         # "yes"
        driver.press("ok")
        view = driver.view()
        assert view.mode == "end" and view.saved_to
        shown = {p.colour: (p.buttons, p.score) for p in service.status.screen.players}
    finally:
        service.stop()
    saved = parse_record(Path(view.saved_to).read_text())
    plan = driver.plan
    assert list(saved.moves) == plan[:4] + [{"adjust": yellow, "buttons": 3},
                                            {"adjust": 1 - yellow, "buttons": -2}]
    state, result = replay(saved)
    replayed = {saved.players[i].lower(): (state.players[i].buttons, result.scores[i])
                for i in range(2)}
    assert replayed == shown
    assert "corrections" not in saved.meta


def test_a_saved_record_says_when_it_was_played_and_by_what(tmp_path):
    record = GOLDEN_RECORDS[2]
    clock = StepClock()
    service = service_for(tmp_path / "journal", record, clock)
    try:
        driver = TableDriver(service, clock, record)
        view = driver.play()
    finally:
        service.stop()
    saved = parse_record(Path(view.saved_to).read_text())
    meta = saved.meta
    started, ended = (datetime.fromisoformat(meta[k]) for k in ("started", "ended"))
    assert started.utcoffset() is not None and ended.utcoffset() is not None
    assert meta["duration_s"] == int((ended - started).total_seconds()) >= 0
    assert meta["app"].startswith("patchwork-companion")
    assert saved.result == json.loads(json.dumps(
        {"scores": replay(record)[1].scores, "winner": replay(record)[1].winner}))
