"""Club mode against a real Mosquitto broker on 127.0.0.1 (never a mock)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import paho.mqtt.client as mqtt
import pytest

from firmware_py.club import topics
from firmware_py.club.board import Board
from firmware_py.club.bridge import ClubBridge
from firmware_py.club.simboxes import SimGame
from mqtt_broker import PASSWORD, USER, Broker


@pytest.fixture()
def broker(tmp_path):
    b = Broker(tmp_path).start()
    yield b
    b.kill()


class Watcher:
    """A scoreboard model fed by a real subscriber client."""

    def __init__(self, broker: Broker, club: str = "club1", persistent: bool = False,
                 user: str = USER):
        self.board = Board(club)
        self.lock = threading.Lock()
        self.raw: list[tuple[str, bytes]] = []
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"watch-{os.getpid()}",
                                  clean_session=not persistent)
        self.client.username_pw_set(user, PASSWORD)
        self.client.reconnect_delay_set(1, 2)
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(topics.club_filter(club), qos=1)
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", broker.port, 5)
        self.client.loop_start()

    def _on_message(self, client, userdata, msg):
        with self.lock:
            self.raw.append((msg.topic, bytes(msg.payload)))
            self.board.message(msg.topic, bytes(msg.payload), time.monotonic())

    def wait(self, check, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                if check(self.board):
                    return True
            time.sleep(0.05)
        with self.lock:
            return check(self.board)

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def _play(bridge: ClubBridge, game: SimGame, moves: int) -> None:
    for _ in range(moves):
        if not game.step():
            break
        bridge.offer(game.offer())


def _turn_events(watcher: Watcher, game_id: str) -> list[int]:
    with watcher.lock:
        out = []
        for topic, payload in watcher.raw:
            if topic.endswith("/event"):
                e = topics.parse_event(payload)
                if e["game_id"] == game_id and e["kind"] == "turn":
                    out.append(e["turn"])
        return out


def _drained(bridge: ClubBridge, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while len(bridge.outbox) and time.monotonic() < deadline:
        time.sleep(0.02)
    return len(bridge.outbox) == 0


def test_a_box_publishes_state_events_and_record(broker, tmp_path):
    watcher = Watcher(broker)
    bridge = ClubBridge(broker.settings("t1"), tmp_path / "out.sqlite").start()
    game = SimGame(3, ("Ann", "Bob"))
    while game.step():
        bridge.offer(game.offer())
    key = ("t1", game.game_id)
    assert watcher.wait(lambda b: key in b.finished and b.finished[key].record, 20)
    row = watcher.board.rows()[0]
    assert row["table"] == "t1" and row["online"] and row["over"]
    assert row["turn"] == len(game.moves)
    assert watcher.board.tables["t1"].state["seq"] == len(game.moves) + 1   # the turns and the end
    done = watcher.board.finished[key]
    assert done.players == ("Ann", "Bob") and done.record["moves"] == game.moves
    assert sorted(_turn_events(watcher, game.game_id)) == list(range(1, len(game.moves) + 1))
    assert _drained(bridge, 5)              # every queued message was acknowledged
    bridge.stop()
    assert watcher.wait(lambda b: not b.tables["t1"].online, 5)
    watcher.close()


def test_with_the_readme_acl_a_box_publishes_only_its_own_table(tmp_path):
    """The README's per-table ACL (the user name is the table's name; the scoreboard
    only reads): a box's own table reaches the scoreboard, and a box that claims
    another table's name gets nothing through, its last will included."""
    acl = ("user scoreboard\ntopic read patchwork/club1/#\n\n"
           "pattern readwrite patchwork/club1/%u/#\n")
    broker = Broker(tmp_path, users=("scoreboard", "t1", "t2"), acl=acl).start()
    try:
        watcher = Watcher(broker, user="scoreboard")
        own = ClubBridge(broker.settings("t1", user="t1"), tmp_path / "own.sqlite").start()
        impostor = ClubBridge(broker.settings("t2", user="t1"), tmp_path / "other.sqlite").start()
        game = SimGame(3, ("Ann", "Bob"))
        for _ in range(6):
            game.step()
            own.offer(game.offer())
            impostor.offer(game.offer())
        assert watcher.wait(lambda b: "t1" in b.tables and b.tables["t1"].state
                            and b.tables["t1"].state["turn"] == 6, 20)
        assert _drained(own, 10) and _drained(impostor, 10)   # the broker took every message
        impostor.stop()
        own.stop()
        assert watcher.wait(lambda b: not b.tables["t1"].online, 5)
        with watcher.lock:
            assert all("/t2/" not in topic for topic, _ in watcher.raw)
            assert "t2" not in watcher.board.tables
        watcher.close()
    finally:
        broker.kill()


def test_wrong_password_is_a_clear_error_and_the_game_goes_on(broker, tmp_path):
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    bridge = ClubBridge(broker.settings("t1", password_file=wrong), tmp_path / "out.sqlite").start()
    game = SimGame(5, ("Ann", "Bob"))
    _play(bridge, game, 10)
    deadline = time.monotonic() + 10
    while not bridge.error and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "refused" in bridge.error and "127.0.0.1" in bridge.error
    assert "password" in bridge.error.lower() or "authori" in bridge.error.lower()
    assert not bridge.connected
    assert len(bridge.outbox) == 10        # the turns wait on disk, nothing lost
    bridge.stop()


def test_hostile_payloads_are_ignored_and_counted(broker, tmp_path):
    watcher = Watcher(broker)
    bridge = ClubBridge(broker.settings("t1"), tmp_path / "out.sqlite").start()
    game = SimGame(7, ("Ann", "Bob"))
    _play(bridge, game, 5)
    assert watcher.wait(lambda b: b.rows() and b.rows()[0]["turn"] == 5, 10)
    evil = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="evil")
    evil.username_pw_set(USER, PASSWORD)
    evil.connect("127.0.0.1", broker.port)
    evil.loop_start()
    bad = [b"\xff\xfe not utf8", b"[" * 5000 + b"]" * 5000, b'{"game_id": [1,2]}', b"{}",
           b'{"game":"patchwork","game_id":"x","turn":-4,"players":[],"ts":1}', b"x" * 200_000,
           b'{"kind":"end","game_id":"g","seq":1,"turn":3,"scores":[1,2],"ts":NaN}']
    for payload in bad:
        for kind in ("state", "event", "record"):
            evil.publish(f"patchwork/club1/t1/{kind}", payload, qos=1).wait_for_publish(5)
    evil.publish("patchwork/club1/t1/status", b"maybe", qos=1).wait_for_publish(5)
    expected = len(bad) * 3 + 1
    assert watcher.wait(lambda b: b.rejected >= expected, 10)
    assert watcher.board.rejected == expected
    row = watcher.board.rows()[0]
    assert row["turn"] == 5 and row["online"]        # the table's state is untouched
    evil.loop_stop()
    bridge.stop()
    watcher.close()


def test_a_killed_box_is_offline_within_15_seconds(broker, tmp_path):
    watcher = Watcher(broker)
    code = ("import sys, time; sys.path.insert(0, %r)\n"
            "from firmware_py.club.bridge import ClubBridge, ClubSettings\n"
            "from firmware_py.club.simboxes import SimGame\n"
            "s = ClubSettings('127.0.0.1', %d, 'club1', 'doomed', username=%r, password_file=%r)\n"
            "b = ClubBridge(s, %r).start(); g = SimGame(1, ('A', 'B'))\n"
            "while True:\n    g.step(); b.offer(g.offer()); time.sleep(0.2)\n"
            % (os.getcwd(), broker.port, USER, str(broker.password_file), str(tmp_path / "d.sqlite")))
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        assert watcher.wait(lambda b: "doomed" in b.tables and b.tables["doomed"].online
                            and b.tables["doomed"].state.get("turn", 0) >= 2, 20)
        proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        assert watcher.wait(lambda b: not b.tables["doomed"].online, 15)
        assert time.monotonic() - killed < 15
    finally:
        proc.kill()
        proc.wait()
        watcher.close()


def _boxes_code(broker: Broker, folder, count: int, rate: float, seconds: float, prefix: str) -> str:
    return ("import sys; sys.path.insert(0, %r)\n"
            "from firmware_py.club.bridge import ClubSettings\n"
            "from firmware_py.club.simboxes import run_boxes\n"
            "s = ClubSettings('127.0.0.1', %d, 'club1', 'x', username=%r, password_file=%r)\n"
            "n = run_boxes(s, %d, %r, %r, seconds=%r, prefix=%r)\n"
            "print(n, flush=True)\n"
            % (os.getcwd(), broker.port, USER, str(broker.password_file), count, rate, str(folder),
               seconds, prefix))


def _no_gaps(watcher: Watcher) -> dict[str, int]:
    """Per table: the turns of its current game, checked to have come without a gap."""
    seen: dict[str, dict[str, set]] = {}
    with watcher.lock:
        for topic, payload in watcher.raw:
            if topic.endswith("/event"):
                table = topic.split("/")[2]
                e = topics.parse_event(payload)
                seen.setdefault(table, {}).setdefault(e["game_id"], set()).add(e["seq"])
        out = {}
        for table, games in seen.items():
            for game_id, seqs in games.items():
                assert seqs == set(range(1, max(seqs) + 1)), (table, game_id, sorted(seqs))
            state = watcher.board.tables[table].state
            out[table] = len(games.get(state["game_id"], ()))
        return out


def test_a_hundred_boxes_at_five_messages_a_second(broker, tmp_path):
    watcher = Watcher(broker)
    procs = [subprocess.Popen([sys.executable, "-c",
                               _boxes_code(broker, tmp_path / f"p{i}", 25, 2.5, 8.0, f"p{i}")],
                              stdout=subprocess.PIPE, text=True) for i in range(4)]
    played = sum(int(p.communicate(timeout=60)[0].split()[-1]) for p in procs)
    assert played >= 100 * 2.5 * 8 * 0.8
    assert watcher.wait(lambda b: len(b.tables) == 100 and not any(t.online for t in b.tables.values()), 20)
    counts = _no_gaps(watcher)
    assert len(counts) == 100
    for name, table in watcher.board.tables.items():
        assert table.state["turn"] > 0
    assert watcher.board.rejected == 0
    watcher.close()


@pytest.mark.slow
def test_the_broker_restarts_and_nothing_is_lost(tmp_path):
    broker = Broker(tmp_path, persistence=True).start()
    watcher = Watcher(broker, persistent=True)
    proc = subprocess.Popen([sys.executable, "-c",
                             _boxes_code(broker, tmp_path / "boxes", 5, 2.0, 75.0, "r")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert watcher.wait(lambda b: len(b.tables) == 5 and all(t.online for t in b.tables.values()), 20)
        broker.stop()
        time.sleep(60)                                   # the boxes play on, queuing on disk
        broker.start()
        restarted = time.monotonic()
        assert watcher.wait(lambda b: all(t.online for t in b.tables.values())
                            and all(t.last_seen > restarted for t in b.tables.values()), 30)
        proc.communicate(timeout=60)
        assert watcher.wait(lambda b: not any(t.online for t in b.tables.values()), 20)
        counts = _no_gaps(watcher)
        for name, table in watcher.board.tables.items():
            assert counts[name] >= table.state["turn"] > 0
    finally:
        proc.kill()
        broker.kill()
        watcher.close()


def test_a_broker_that_does_not_answer_is_a_clear_error_and_turns_wait(tmp_path):
    from mqtt_broker import free_port
    from firmware_py.club.bridge import ClubSettings
    nobody = free_port()
    bridge = ClubBridge(ClubSettings("127.0.0.1", nobody, "club1", "t1"), tmp_path / "out.sqlite").start()
    try:
        _play(bridge, SimGame(6, ("Ann", "Bob")), 3)
        deadline = time.monotonic() + 10
        while (not bridge.error or len(bridge.outbox) < 3) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"cannot reach the broker at 127.0.0.1:{nobody}" in bridge.error
        assert not bridge.connected and len(bridge.outbox) == 3
    finally:
        bridge.stop()


def test_a_broker_killed_outright_gets_every_queued_turn_after_its_restart(broker, tmp_path):
    bridge = ClubBridge(broker.settings("t1"), tmp_path / "out.sqlite").start()
    game = SimGame(8, ("Ann", "Bob"))
    try:
        deadline = time.monotonic() + 10
        while not bridge.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        broker.kill()                                    # SIGKILL: no goodbye, nothing saved
        _play(bridge, game, 6)
        time.sleep(1.0)
        assert len(bridge.outbox) == 6 and not bridge.connected
        broker.start()
        watcher = Watcher(broker)                        # it sees what the box sends again
        try:
            assert watcher.wait(lambda b: "t1" in b.tables and b.tables["t1"].online
                                and b.tables["t1"].state.get("turn") == 6, 30)
            assert sorted(_turn_events(watcher, game.game_id)) == list(range(1, 7))
            assert watcher.board.rejected == 0
        finally:
            watcher.close()
        deadline = time.monotonic() + 5
        while len(bridge.outbox) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(bridge.outbox) == 0
    finally:
        bridge.stop()


def test_two_boxes_with_one_table_name_are_told_so(broker, tmp_path):
    first = ClubBridge(broker.settings("t1"), tmp_path / "a.sqlite").start()
    second = ClubBridge(broker.settings("t1"), tmp_path / "b.sqlite").start()
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and not any("another box" in b.error for b in (first, second)):
            time.sleep(0.1)
        told = [b.error for b in (first, second) if "another box" in b.error]
        assert told and "table 't1' of club 'club1'" in told[0]
    finally:
        first.stop()
        second.stop()


def test_a_full_disk_or_a_bad_record_never_stops_the_table_being_shown(broker, tmp_path, caplog):
    import sqlite3
    from firmware_py.club.progress import Offer
    from firmware_py.rules import GameRecord
    watcher = Watcher(broker)
    bridge = ClubBridge(broker.settings("t1"), tmp_path / "out.sqlite").start()
    game = SimGame(9, ("Ann", "Bob"))
    try:
        def full(*args, **kwargs):
            raise sqlite3.OperationalError("database or disk is full")
        real_add, bridge.outbox.add = bridge.outbox.add, full
        _play(bridge, game, 3)
        assert watcher.wait(lambda b: "t1" in b.tables and b.tables["t1"].state.get("turn") == 3, 10)
        bad = GameRecord("patchwork", "2014", ("Ann", "Bob"), game.circle, ("no such move",), None,
                         None, None)
        bridge.offer(Offer("broken", bad, 1.0))
        bridge.outbox.add = real_add                     # space again: the next move queues all
        _play(bridge, game, 1)
        assert watcher.wait(lambda b: b.tables["t1"].state.get("turn") == 4, 10)
        deadline = time.monotonic() + 10
        while sorted(_turn_events(watcher, game.game_id)) != [1, 2, 3, 4] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(_turn_events(watcher, game.game_id)) == [1, 2, 3, 4]   # none lost
        assert "database or disk is full" in caplog.text and "does not replay" in caplog.text
        assert "Traceback" not in caplog.text
    finally:
        bridge.stop()
        watcher.close()
