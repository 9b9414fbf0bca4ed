"""The scoreboard's web side in one process: many pages, a page that never reads,
saved results. Messages go in exactly as the MQTT thread posts them."""
from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import pytest
from aiohttp import web

from firmware_py.club import serve as serve_module
from firmware_py.club.bridge import ClubSettings
from firmware_py.club.serve import Scoreboard
from mqtt_broker import free_port


class Running:
    """A :class:`Scoreboard` app served on 127.0.0.1 by its own loop thread."""

    def __init__(self, results):
        self.sb = Scoreboard(ClubSettings("127.0.0.1", 1, "c", "t"), results)
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)
        self.runner = web.AppRunner(self.sb.app(), shutdown_timeout=0.5)
        self.loop.run_until_complete(self.runner.setup())
        self.loop.run_until_complete(web.TCPSite(self.runner, "127.0.0.1", self.port).start())
        ready.set()
        self.loop.run_forever()

    def message(self, table: str, kind: str, data) -> None:
        payload = data if isinstance(data, bytes) else json.dumps(data).encode()
        self.sb._post(self.sb._message, f"patchwork/c/{table}/{kind}", payload)

    def close(self):
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def _state(turn: int, name: str) -> dict:
    player = {"name": name, "colour": "green", "position": 0, "buttons": 5, "income": 0,
              "empty": 81, "score": -157}
    return {"game_id": "g1", "turn": turn, "game": "patchwork", "over": False, "to_move": 0,
            "winner": None, "players": [player, {**player, "colour": "yellow"}], "ts": 1.0}


class Page:
    """A page reading ``/events`` on its own thread; ``boards`` are the pushes seen."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), 5)
        self.sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        self.boards: list[dict] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\n\n" in buf:
                block, buf = buf.split(b"\n\n", 1)
                for line in block.split(b"\n"):
                    if line.startswith(b"data: "):
                        self.boards.append(json.loads(line[6:]))

    def turn(self, table: str) -> int | None:
        for board in reversed(self.boards):
            for row in board["tables"]:
                if row["table"] == table:
                    return row["turn"]
        return None


def test_a_page_that_never_reads_is_dropped_and_the_others_go_on(tmp_path, monkeypatch):
    monkeypatch.setattr(serve_module, "PUSH_S", 0.001)
    monkeypatch.setattr(serve_module, "KEEPALIVE_S", 0.3)
    monkeypatch.setattr(serve_module, "WRITE_S", 2.0)
    running = Running(tmp_path / "results")
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect(("127.0.0.1", running.port))
    stuck.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")     # and never reads again
    page = Page(running.port)
    try:
        for turn in range(1, 400):                 # big boards, fast: the stuck page's buffers fill
            for t in range(20):
                running.message(f"t{t:02d}", "state", _state(turn, "N" * 60 + str(t)))
            time.sleep(0.005)
        time.sleep(3.0)                            # quiet: keep-alives go out, the stuck page is dropped
        running.message("t00", "state", _state(450, "Ann"))
        deadline = time.monotonic() + 5
        while page.turn("t00") != 450 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert page.turn("t00") == 450             # the reading page still gets every change
        stuck.settimeout(1)
        closed, deadline = False, time.monotonic() + 10
        while not closed and time.monotonic() < deadline:   # what was sent, then the end
            try:
                closed = stuck.recv(1 << 20) == b""
            except TimeoutError:
                pass
        assert closed                              # the server dropped the stuck page
    finally:
        stuck.close()
        page.sock.close()
        running.close()


def test_many_pages_get_the_same_newest_board(tmp_path):
    running = Running(tmp_path / "results")
    pages = [Page(running.port) for _ in range(30)]
    try:
        for turn in range(1, 30):
            running.message("t1", "state", _state(turn, "Ann"))
        deadline = time.monotonic() + 10
        while any(p.turn("t1") != 29 for p in pages) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [p.turn("t1") for p in pages] == [29] * 30
        before = running.sb._encoded
        running.message("t1", "status", b"online")
        time.sleep(0.5)
        assert running.sb._encoded is not before and all(p.boards[-1]["tables"][0]["online"] for p in pages)
    finally:
        for p in pages:
            p.sock.close()
        running.close()


@pytest.fixture()
def broker(tmp_path):
    from mqtt_broker import Broker
    b = Broker(tmp_path).start()
    yield b
    b.kill()


def _wait(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def _subscribed(running: Running, settings: ClubSettings):
    running.sb.settings = settings
    client = running.sb.client()
    client.connect_async(settings.host, settings.port, 5)
    client.loop_start()
    return client


def test_a_wrong_password_stays_the_scoreboards_reason(broker, tmp_path):
    wrong = tmp_path / "wrong"
    wrong.write_text("guess\n")
    running = Running(tmp_path / "results")
    client = _subscribed(running, broker.settings(club="c", password_file=wrong))
    try:
        assert _wait(lambda: "refused" in running.sb.broker_error, 10)
        time.sleep(3)                              # paho retries; each retry disconnects again
        assert "refused the scoreboard" in running.sb.broker_error
        assert "Not authorized" in running.sb.broker_error
        assert not running.sb.broker_online
    finally:
        client.loop_stop()
        running.close()


def test_a_broker_that_does_not_answer_is_named(tmp_path):
    running = Running(tmp_path / "results")
    nobody = free_port()
    client = _subscribed(running, ClubSettings("127.0.0.1", nobody, "c", "t"))
    try:
        assert _wait(lambda: running.sb.broker_error, 10)
        assert f"cannot reach the broker at 127.0.0.1:{nobody}" in running.sb.broker_error
    finally:
        client.loop_stop()
        running.close()


def test_a_box_that_died_while_the_broker_was_away_is_offline_after_it_returns(broker, tmp_path):
    import paho.mqtt.client as mqtt
    from mqtt_broker import PASSWORD, USER
    running = Running(tmp_path / "results")
    client = _subscribed(running, broker.settings(club="c"))
    ghost = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="ghost")
    ghost.username_pw_set(USER, PASSWORD)
    ghost.connect("127.0.0.1", broker.port)
    ghost.loop_start()
    try:
        ghost.publish("patchwork/c/ghost/status", b"online", qos=1, retain=True).wait_for_publish(5)
        assert _wait(lambda: "ghost" in running.sb.board.tables
                     and running.sb.board.tables["ghost"].online, 10)
        ghost.loop_stop()
        broker.kill()                              # no persistence: the retained status is gone
        broker.start()
        assert _wait(lambda: running.sb.broker_online, 15)
        assert _wait(lambda: not running.sb.board.tables["ghost"].online, 5)
    finally:
        client.loop_stop()
        running.close()


def _record(seed: int, game_id: str) -> bytes:
    from firmware_py.club.simboxes import SimGame
    from firmware_py.rules import GameRecord, dumps_record
    game = SimGame(seed, ("Ann", "Bob"))
    while game.step():
        pass
    r = game.offer().record
    return dumps_record(GameRecord(r.game, r.time_board, r.players, r.circle, r.moves, None, None,
                                   {"game_id": game_id})).encode()


def test_finished_games_are_kept_in_the_scoreboards_own_store(tmp_path):
    """Kept in SQLite (0700 folder, 0600 file, whatever the umask), reloaded by a
    restarted scoreboard, and an undo at the table takes its game out of the store."""
    import os
    import stat

    from firmware_py.club.board import Board
    from firmware_py.club.results import FILE, ResultStore
    results = tmp_path / "deep" / "results"
    old = os.umask(0o022)
    try:
        running = Running(results)
    finally:
        os.umask(old)
    hostile = "../../escape/é x"
    try:
        running.message("t1", "record", _record(31, hostile))
        running.message("t1", "record", _record(32, "plain-1"))
        assert _wait(lambda: len(running.sb.store.keys()) == 2, 5)
        assert stat.S_IMODE(results.stat().st_mode) == 0o700
        assert stat.S_IMODE((results / FILE).stat().st_mode) == 0o600
        assert sorted(p.name for p in results.iterdir() if not p.name.startswith(FILE)) == []
        restarted = Board("c")
        assert ResultStore(results).load(restarted) == []
        assert set(restarted.finished) == {("t1", hostile), ("t1", "plain-1")}
        event = {"game_id": "plain-1", "seq": 9, "turn": 30, "kind": "undo", "player": None,
                 "scores": [0, 0], "ts": 2.0}
        running.message("t1", "event", event)           # the last move taken back at the table
        assert _wait(lambda: len(running.sb.store.keys()) == 1, 5)
        running.message("t1", "record", _record(33, "plain-1"))   # and the game ends differently
        assert _wait(lambda: len(running.sb.store.keys()) == 2, 5)
        again = Board("c")
        ResultStore(results).load(again)
        assert again.finished[("t1", "plain-1")].record == json.loads(_record(33, "plain-1"))
    finally:
        running.close()


def test_two_scoreboards_of_one_club_do_not_throw_each_other_off(broker, tmp_path):
    first, second = Running(tmp_path / "a"), Running(tmp_path / "b")
    clients = [_subscribed(r, broker.settings(club="c")) for r in (first, second)]
    try:
        assert _wait(lambda: first.sb.broker_online and second.sb.broker_online, 10)
        time.sleep(3)                              # with one client id they would take turns
        assert first.sb.broker_online and second.sb.broker_online
        assert not first.sb.broker_error and not second.sb.broker_error
    finally:
        for c in clients:
            c.loop_stop()
        first.close()
        second.close()
