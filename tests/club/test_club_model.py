"""Club mode's pure parts: events from a game as it stands, and the scoreboard model."""
from __future__ import annotations

import json

import pytest

from firmware_py.club import topics
from firmware_py.club.board import Board
from firmware_py.club.progress import Offer, new_events, state_of
from firmware_py.club.simboxes import SimGame
from firmware_py.rules import GameRecord, dumps_record


def _offer(game: SimGame, moves: list, ts: float = 1.0) -> Offer:
    record = GameRecord("patchwork", "2014", game.names, game.circle, tuple(moves), None, None, None)
    return Offer(game.game_id, record, ts)


def test_each_new_move_is_one_turn_event_and_a_repeat_offer_adds_none():
    game = SimGame(11, ("Ann", "Bob"))
    for _ in range(6):
        game.step()
    events = new_events(_offer(game, game.moves[:4]), 0, [], False)
    assert [(e["kind"], e["turn"], e["seq"]) for e in events] == [("turn", i, i) for i in range(1, 5)]
    assert new_events(_offer(game, game.moves[:4]), 4, game.moves[:4], False) == []
    more = new_events(_offer(game, game.moves[:6]), 4, game.moves[:4], False)
    assert [(e["turn"], e["seq"]) for e in more] == [(5, 5), (6, 6)]
    assert [e["move"] for e in more] == game.moves[4:6]


def test_an_undo_is_one_event_back_to_the_turn_that_stands():
    game = SimGame(12, ("Ann", "Bob"))
    for _ in range(5):
        game.step()
    events = new_events(_offer(game, game.moves[:3]), 5, game.moves[:5], False)
    assert [(e["kind"], e["turn"], e["seq"]) for e in events] == [("undo", 3, 6)]
    state = state_of(_offer(game, game.moves[:3]))
    assert events[0]["scores"] == [p["score"] for p in state["players"]]


def test_the_end_comes_once_with_the_tally():
    game = SimGame(13, ("Ann", "Bob"))
    while game.step():
        pass
    n = len(game.moves)
    events = new_events(_offer(game, game.moves), n - 1, game.moves[:-1], False)
    assert [e["kind"] for e in events] == ["turn", "end"]
    end = events[-1]
    state = state_of(_offer(game, game.moves))
    assert state["over"] and end["winner"] == state["winner"]
    assert end["scores"] == [p["score"] for p in state["players"]]
    assert new_events(_offer(game, game.moves), n + 1, game.moves, True) == []


def _msg(board: Board, kind: str, data, table: str = "t1", now: float = 0.0) -> bool:
    payload = data if isinstance(data, bytes) else json.dumps(data).encode()
    return board.message(f"patchwork/c/{table}/{kind}", payload, now)


def _finish(board: Board, table: str, names, scores, winner, game_id):
    game = SimGame(int(game_id, 16) % 1000, tuple(names))
    while game.step():
        pass
    record = game.offer().record
    rec = json.loads(dumps_record(GameRecord(record.game, record.time_board, tuple(names), record.circle,
                                             record.moves, None, None, {"game_id": game_id})))
    _msg(board, "record", rec, table)
    return board.finished[(table, game_id)]


def test_a_repeated_event_is_counted_once():
    board = Board("c")
    event = {"game_id": "g1", "seq": 1, "turn": 1, "kind": "turn", "player": 0, "move": "advance",
             "scores": [-160, -162], "ts": 5.0}
    assert _msg(board, "event", event) is True
    assert _msg(board, "event", event) is False
    assert board.tables["t1"].events == 1


def test_standings_rank_by_wins_then_score_difference():
    board = Board("c")
    a = _finish(board, "t1", ("Ann", "Bob"), None, None, "a1")
    b = _finish(board, "t2", ("Ann", "Cy"), None, None, "b2")
    rows = {r["name"]: r for r in board.standings()}
    expect: dict[str, list[int]] = {}
    for g in (a, b):
        for i, name in enumerate(g.players):
            row = expect.setdefault(name, [0, 0, 0])
            row[0] += 1
            row[1] += g.winner == i
            row[2] += g.scores[i] - g.scores[1 - i]
    assert {n: [r["played"], r["wins"], r["diff"]] for n, r in rows.items()} == expect
    order = [r["name"] for r in board.standings()]
    assert order == sorted(expect, key=lambda n: (-expect[n][1], -expect[n][2], n))
    csv_lines = board.results_csv().splitlines()
    assert csv_lines[0].startswith("table,game_id") and len(csv_lines) == 3
    assert len(board.records_jsonl().splitlines()) == 2
    shown = board.snapshot()["finished_games"]
    assert [(g["table"], g["players"][0][0], g["winner"]) for g in shown] == \
        [("t1", "Ann", a.players[a.winner]), ("t2", "Ann", b.players[b.winner])]


@pytest.mark.parametrize("kind,payload", [
    ("state", b"[]"), ("state", b'{"game":"chess"}'), ("event", b'{"kind":"turn"}'),
    ("status", b"ONLINE"), ("record", b'{"format":"patchwork-game-record/1"}'),
    ("state", b"{" * 40 + b"}" * 40), ("event", b'{"a": NaN}')])
def test_a_bad_payload_changes_nothing_but_the_count(kind, payload):
    board = Board("c")
    _msg(board, "status", b"online")
    before = board.rows()
    assert _msg(board, kind, payload) is True
    assert board.rejected == 1 and board.rows() == before
    assert board.last_rejection.startswith(f"patchwork/c/t1/{kind}: ")


def test_foreign_topics_are_rejected():
    board = Board("c")
    board.message("patchwork/other/t1/state", b"{}", 0)
    board.message("patchwork/c/t+1/state", b"{}", 0)
    board.message("patchwork/c/t1/state/extra", b"{}", 0)
    assert board.rejected == 3 and board.tables == {}


def test_topic_names():
    assert topics.topic("tuesday", "t7", "state") == "patchwork/tuesday/t7/state"
    with pytest.raises(ValueError):
        topics.topic("tuesday", "t7", "chat")
    assert topics.club_filter("tuesday") == "patchwork/tuesday/+/+"


def _record_bytes(game: SimGame, game_id: str, result=None) -> bytes:
    record = game.offer().record
    return dumps_record(GameRecord(record.game, record.time_board, record.players, record.circle,
                                   record.moves, None, result, {"game_id": game_id})).encode()


def _finished_game(seed: int) -> SimGame:
    game = SimGame(seed, ("Ann", "Bob"))
    while game.step():
        pass
    return game


def test_a_record_that_replays_but_lies_in_its_result_is_rejected():
    board = Board("c")
    game = _finished_game(21)
    final = state_of(game.offer())
    truth = [p["score"] for p in final["players"]]
    lie = {"scores": [truth[0] + 30, truth[1]], "winner": 0}
    assert _msg(board, "record", _record_bytes(game, "g21", lie)) is True
    assert board.rejected == 1 and "not what its moves give" in board.last_rejection
    assert board.finished == {}
    _msg(board, "record", _record_bytes(game, "g21", {"scores": truth, "winner": final["winner"]}))
    assert board.finished[("t1", "g21")].scores == tuple(truth)


def test_a_game_id_belongs_to_its_table_so_no_box_claims_or_shadows_another_tables_game():
    """Box t9 posts first under the game id t1 will use: t1's real record still counts,
    and t9's own game is t9's."""
    board = Board("c")
    end = {"game_id": "g22", "seq": 1, "turn": 1, "kind": "end", "player": None,
           "scores": [500, -200], "winner": 0, "ts": 1.0}
    _msg(board, "event", end, table="t9")
    _msg(board, "record", _record_bytes(_finished_game(22), "g22"), table="t1")
    assert board.rejected == 0
    honest = board.finished[("t1", "g22")]
    assert honest.record is not None and board.finished[("t9", "g22")].record is None
    assert {r["name"] for r in board.standings()} == {"Ann", "Bob"}
    assert sum(r["played"] for r in board.standings()) == 2      # only t1's game counts


def test_an_end_event_without_its_record_shows_unverified_and_counts_nothing():
    """The forged one-move 500 : -200 win: on the board as unverified, never in the standings."""
    board = Board("c")
    _msg(board, "state", {"game_id": "g1", "turn": 1, "game": "patchwork", "over": True,
                          "to_move": None, "winner": 0, "ts": 1.0, "players": [
                              {"name": n, "colour": c, "position": 53, "buttons": 0, "income": 0,
                               "empty": 0, "score": s}
                              for n, c, s in (("Mallory", "green", 500), ("Bob", "yellow", -200))]})
    _msg(board, "event", {"game_id": "g1", "seq": 1, "turn": 1, "kind": "end", "player": None,
                          "scores": [500, -200], "winner": 0, "ts": 1.0})
    assert board.standings() == [] and board.results_csv().count("\n") == 1
    snap = board.snapshot()
    assert snap["finished"] == 0 and snap["unverified"] == 1
    assert snap["finished_games"][0]["verified"] is False


def test_the_same_moves_under_new_game_ids_count_once():
    board = Board("c")
    game = _finished_game(24)
    for i in range(5):
        _msg(board, "record", _record_bytes(game, f"copy-{i}"), table="t1")
    assert board.rejected == 4 and "counts already" in board.last_rejection
    _msg(board, "record", _record_bytes(game, "stolen"), table="t2")    # another table's copy
    assert board.finished[("t2", "stolen")].same_as == ("t1", "copy-0")
    assert len(board.counted()) == 1 and sum(r["wins"] for r in board.standings()) == 1
    assert [g["same_as"] for g in board.snapshot()["finished_games"]] == ["", "t1"]
    assert board.snapshot()["unverified"] == 0


def test_a_retained_event_or_record_is_never_counted():
    board = Board("c")
    end = {"game_id": "g1", "seq": 1, "turn": 1, "kind": "end", "player": None,
           "scores": [500, -200], "winner": 0, "ts": 1.0}
    board.message("patchwork/c/t1/event", json.dumps(end).encode(), 0.0, retained=True)
    board.message("patchwork/c/t1/record", _record_bytes(_finished_game(25), "g25"), 0.0,
                  retained=True)
    assert board.finished == {} and board.rejected == 2 and "retained" in board.last_rejection


def test_a_table_finishing_games_faster_than_anyone_plays_is_cut_off(monkeypatch):
    from firmware_py.club import board as board_module
    board = Board("c")
    end = {"seq": 1, "turn": 1, "kind": "end", "player": None, "scores": [1, 0], "winner": 0,
           "ts": 1.0}
    for i in range(30):
        _msg(board, "event", {**end, "game_id": f"g{i}"}, now=float(i))
    assert len(board.finished) == board_module.GAMES_PER_HOUR
    assert "within the hour" in board.last_rejection
    _msg(board, "event", {**end, "game_id": "later"}, now=3600.0 + 1)
    assert ("t1", "later") in board.finished
    monkeypatch.setattr(board_module, "MAX_GAMES", len(board.finished))
    _msg(board, "event", {**end, "game_id": "x"}, table="t2")
    assert ("t2", "x") not in board.finished and "finished games already" in board.last_rejection


def test_an_undo_of_the_last_move_takes_the_game_out_of_the_finished_games():
    board = Board("c")
    base = {"game_id": "g1", "player": None, "ts": 1.0}
    _msg(board, "event", {**base, "seq": 1, "turn": 1, "kind": "end", "scores": [10, 3], "winner": 0})
    assert board.finished[("t1", "g1")].winner == 0
    _msg(board, "event", {**base, "seq": 2, "turn": 0, "kind": "undo", "scores": [0, 0]})
    assert board.finished == {}
    _msg(board, "event", {**base, "seq": 3, "turn": 1, "kind": "turn", "scores": [2, 9]})
    _msg(board, "event", {**base, "seq": 4, "turn": 1, "kind": "end", "scores": [2, 9], "winner": 1})
    assert board.finished[("t1", "g1")].winner == 1 and board.finished[("t1", "g1")].scores == (2, 9)


def test_memory_is_bounded_against_a_flood_of_tables_and_games(monkeypatch):
    from firmware_py.club import board as board_module
    monkeypatch.setattr(board_module, "MAX_TABLES", 5)
    board = Board("c")
    for i in range(8):
        _msg(board, "status", b"online", table=f"t{i}")
    assert len(board.tables) == 5 and board.rejected == 3
    assert "already shows 5 tables" in board.last_rejection
    event = {"seq": 1, "turn": 1, "kind": "turn", "player": 0, "scores": [0, 0], "ts": 1.0}
    for i in range(50):
        _msg(board, "event", {**event, "game_id": f"g{i}"}, table="t0")
    assert len(board.tables["t0"].seen) == board_module.SEEN_GAMES
    assert _msg(board, "event", {**event, "game_id": "g49"}, table="t0") is False


def test_a_name_a_spreadsheet_would_run_stays_text_in_the_csv():
    board = Board("c")
    _finish(board, "t1", ("=HYPERLINK(\"http://x\")", "@Bob"), None, None, "c1")
    row = board.results_csv().splitlines()[1]
    assert "'=HYPERLINK" in row and ",'@Bob," in row


def test_an_older_state_delivered_late_does_not_turn_the_table_back():
    board = Board("c")
    game = SimGame(41, ("Ann", "Bob"))
    for _ in range(6):
        game.step()
    newer = {**state_of(_offer(game, game.moves[:6], ts=20.0)), "seq": 6}
    older = {**state_of(_offer(game, game.moves[:5], ts=30.0)), "seq": 5}  # a box clock may jump
    _msg(board, "state", newer)
    assert _msg(board, "state", older) is False
    assert board.rows()[0]["turn"] == 6 and board.rejected == 0
    undone = {**state_of(_offer(game, game.moves[:4], ts=5.0)), "seq": 7}  # an undo is newer
    assert _msg(board, "state", undone) is True and board.rows()[0]["turn"] == 4
