"""Club attacks against the real Mosquitto the tests start: a box inside its own
per-table ACL tries to forge results, and a broker killed outright must not cost
a finished game (the scoreboard's ack, the box's re-sending)."""
from __future__ import annotations

import json
import time

import paho.mqtt.client as mqtt
import pytest

from firmware_py.club import bridge as bridge_module
from firmware_py.club.bridge import ClubBridge
from firmware_py.club.simboxes import SimGame
from firmware_py.rules import GameRecord, dumps_record
from mqtt_broker import PASSWORD, USER, Broker
from test_club_serve import Running, _subscribed, _wait

ACL = ("user scoreboard\ntopic read patchwork/c/#\ntopic write patchwork/c/+/ack\n\n"
       "pattern readwrite patchwork/c/%u/#\n")


def _finished(seed: int, names=("Ann", "Bob")) -> SimGame:
    game = SimGame(seed, names)
    while game.step():
        pass
    return game


def _record(game: SimGame, game_id: str) -> bytes:
    r = game.offer().record
    return dumps_record(GameRecord(r.game, r.time_board, r.players, r.circle, r.moves, None,
                                   None, {"game_id": game_id})).encode()


def _client(broker: Broker, user: str) -> mqtt.Client:
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"raw-{user}")
    client.username_pw_set(user, PASSWORD)
    client.connect("127.0.0.1", broker.port, 5)
    client.loop_start()
    return client


def _send(client: mqtt.Client, topic: str, payload, retain: bool = False) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    client.publish(topic, data, qos=1, retain=retain).wait_for_publish(5)


def _forged_end(game_id: str) -> dict:
    return {"game_id": game_id, "seq": 1, "turn": 1, "kind": "end", "player": None,
            "scores": [500, -200], "winner": 0, "ts": 1.0}


def _forged_state(game_id: str) -> dict:
    return {"game_id": game_id, "turn": 1, "game": "patchwork", "over": True, "to_move": None,
            "winner": 0, "ts": 1.0, "players": [
                {"name": n, "colour": c, "position": 53, "buttons": 0, "income": 0, "empty": 0,
                 "score": s} for n, c, s in (("Mallory", "green", 500), ("Bob", "yellow", -200))]}


def _scoreboard(broker: Broker, results, user: str = "scoreboard") -> tuple[Running, mqtt.Client]:
    running = Running(results)
    client = _subscribed(running, broker.settings("sb", club="c", user=user))
    assert _wait(lambda: running.sb.broker_online, 15)
    return running, client


def _close(running: Running, client: mqtt.Client) -> None:
    client.disconnect()
    client.loop_stop()
    running.close()


def test_a_box_inside_its_acl_cannot_forge_the_standings(tmp_path):
    """Table t2's box posts a forged 500 : -200 win (live and retained), one real record
    under five new game ids, and claims t1's game id first; only real records count,
    each once, t1's game is t1's, and a restarted scoreboard gets no forged win back."""
    broker = Broker(tmp_path, users=("scoreboard", "t1", "t2"), acl=ACL).start()
    running, sub = _scoreboard(broker, tmp_path / "results")
    mallory = _client(broker, "t2")
    honest_game = _finished(51)
    own = ClubBridge(broker.settings("t1", club="c", user="t1"), tmp_path / "t1.sqlite").start()
    try:
        _send(mallory, "patchwork/c/t2/state", _forged_state("fake"), retain=True)
        _send(mallory, "patchwork/c/t2/event", _forged_end("fake"), retain=True)
        _send(mallory, "patchwork/c/t2/event", _forged_end("fake2"))
        copied = _finished(52, ("Mallory", "Bob"))
        for i in range(5):
            _send(mallory, "patchwork/c/t2/record", _record(copied, f"copy-{i}"))
        claim = _finished(53, ("Mallory", "Eve"))             # t1's game id, taken first
        _send(mallory, "patchwork/c/t2/event", _forged_end(honest_game.game_id))
        _send(mallory, "patchwork/c/t2/record", _record(claim, honest_game.game_id))
        _send(mallory, "patchwork/c/t1/record", _record(_finished(54), honest_game.game_id))
        own.offer(honest_game.offer())                   # the real game ends at table t1
        board = running.sb.board
        assert _wait(lambda: ("t1", honest_game.game_id) in board.finished
                     and board.finished[("t1", honest_game.game_id)].record is not None, 20)
        assert _wait(lambda: own.outbox.unconfirmed() == [], 10)    # the scoreboard acked it
        counted = {g.key for g in board.counted()}
        assert counted == {("t1", honest_game.game_id), ("t2", "copy-0"),
                           ("t2", honest_game.game_id)}
        assert sum(r["played"] for r in board.standings()) == 6     # three games, each once
        assert all(s["diff"] < 700 for s in board.standings())
        unverified = {k for k, g in board.finished.items() if g.record is None}
        assert unverified == {("t2", "fake"), ("t2", "fake2")}      # shown, never counted
    finally:
        own.stop()
        mallory.loop_stop()
        _close(running, sub)
    running, sub = _scoreboard(broker, tmp_path / "results")        # restarted
    try:
        assert _wait(lambda: running.sb.board.rejected >= 1, 10)    # the retained end, refused
        board = running.sb.board
        assert {g.key for g in board.counted()} == counted
        assert all(g.record is not None for g in board.finished.values())
        assert "retained" in board.last_rejection
    finally:
        _close(running, sub)
        broker.kill()


def test_a_finished_game_survives_a_broker_killed_outright(tmp_path, monkeypatch):
    """The box's record reached the broker (acknowledged) while no scoreboard was there;
    the broker is SIGKILLed and forgets it; the box sends it again until the scoreboard
    confirms it, and the scoreboard counts it."""
    monkeypatch.setattr(bridge_module, "RESEND_S", 1.0)
    broker = Broker(tmp_path, persistence=True).start()
    box = ClubBridge(broker.settings("t1", club="c"), tmp_path / "box.sqlite").start()
    game = _finished(61)
    try:
        assert _wait(lambda: box.connected, 10)
        box.offer(game.offer())
        assert _wait(lambda: box.outbox.unconfirmed() and len(box.outbox) == 0, 10)
        assert box.published > len(game.moves)                 # the broker acknowledged all
        time.sleep(1.5)                                          # and nobody confirmed it
        assert len(box.outbox.unconfirmed()) == 1
        broker.kill()
        broker.start()
        running, sub = _scoreboard(broker, tmp_path / "results", USER)
        try:
            key = ("t1", game.game_id)
            assert _wait(lambda: key in running.sb.board.finished
                         and running.sb.board.finished[key].record is not None, 30)
            assert _wait(lambda: box.outbox.unconfirmed() == [], 10)
            assert running.sb.store.keys() == {key}
        finally:
            _close(running, sub)
    finally:
        box.stop()
        broker.kill()


def _certificates(folder) -> tuple:
    """A throw-away CA and a server certificate for 127.0.0.1 signed by it (openssl)."""
    import subprocess

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=club CA",
        "-keyout", "ca.key", "-out", "ca.crt")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", "server.key", "-out", "server.csr")
    (folder / "ext").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "ext", "-out", "server.crt")
    return folder / "ca.crt", folder / "server.crt", folder / "server.key"


def test_a_box_reaches_a_tls_listener_with_the_clubs_ca_and_refuses_another(tmp_path):
    """The README's TLS recipe: Mosquitto's listener with the club's CA; a box with
    ``tls = true`` and that CA connects; with another CA it refuses the broker."""
    import shutil
    from dataclasses import replace
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    ca, cert, key = _certificates(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    other_ca, _, _ = _certificates(other)
    broker = Broker(tmp_path)
    broker.conf.write_text(broker.conf.read_text().replace(
        "allow_anonymous false\n",
        f"allow_anonymous false\ncafile {ca}\ncertfile {cert}\nkeyfile {key}\n"))
    broker.start()
    settings = replace(broker.settings("t1", club="c"), tls=True, ca_file=str(ca))
    good = ClubBridge(settings, tmp_path / "good.sqlite").start()
    bad = ClubBridge(replace(settings, table="t2", ca_file=str(other_ca)),
                     tmp_path / "bad.sqlite").start()
    try:
        assert _wait(lambda: good.connected, 15)
        plain = ClubBridge(broker.settings("t3", club="c"), tmp_path / "plain.sqlite").start()
        try:
            time.sleep(2)
            assert not plain.connected                    # no clear text on the TLS listener
            assert not bad.connected                      # a broker the club's CA did not sign
        finally:
            plain.stop()
    finally:
        good.stop()
        bad.stop()
        broker.kill()
