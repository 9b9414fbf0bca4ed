"""Two boxes at two tables, each a real companion on simulated hardware playing a
game through its buttons and token sensor, each with its club bridge reading the
service's live feed, one real Mosquitto, one scoreboard: both games live."""
from __future__ import annotations

import threading
import time

from firmware_py.service.assembly import start_companion
from firmware_py.commands.club import start_bridge
from firmware_py.config import validate
from firmware_py.sim.demo import bundled_record
from firmware_py.rules import parse_record
from firmware_py.sim.hands import Hands
from firmware_py.sim.player import TablePlayer

from mqtt_broker import USER, Broker
from test_club_broker import Watcher


def _turns_seen(watcher: Watcher, table: str) -> set[int]:
    """The turn numbers of ``table`` that its retained state showed, one by one."""
    import json
    with watcher.lock:
        return {json.loads(p)["turn"] for t, p in watcher.raw if t == f"patchwork/club1/{table}/state"}


def _box(tmp_path, broker: Broker, table: str) -> dict:
    return validate({"backend": "sim", "sim": {"speed": 3.0}, "buttons": {"hold_seconds": 0.4},
                     "sensor": {"stable_ms": 60, "guidance_seconds": 1.0},
                     "journal": {"dir": str(tmp_path / table / "state")},
                     "feed": {"dir": str(tmp_path / table / "feed")},
                     "club": {"enabled": True, "host": "127.0.0.1", "port": broker.port,
                              "username": USER, "password_file": str(broker.password_file),
                              "club": "club1", "table": table}}, table)


def test_two_boxes_publish_their_live_games_to_one_scoreboard(tmp_path):
    broker = Broker(tmp_path).start()
    watcher = Watcher(broker)
    record = parse_record(bundled_record())
    boxes, stops, errors = [], [], []
    try:
        for table in ("t1", "t2"):
            cfg = _box(tmp_path, broker, table)
            companion = start_companion(cfg, folder=tmp_path / table / "state",
                                        deal=lambda game: (record.circle, record.blue or ()),
                                        feed=tmp_path / table / "feed")
            boxes.append(companion)
            stops.append(start_bridge(cfg))
        assert all(stops)

        def play(companion):
            try:
                TablePlayer(Hands(companion), record).play()
            except Exception as exc:            # noqa: BLE001 -- reported by the assertion below
                errors.append(exc)
        threads = [threading.Thread(target=play, args=(c,)) for c in boxes]
        for t in threads:
            t.start()
        # live: both tables appear while their games go on
        assert watcher.wait(lambda b: all(t in b.tables and 5 <= b.tables[t].state.get("turn", 0)
                                          for t in ("t1", "t2")), 150)
        for t in threads:
            t.join(180)
        assert not errors
        finished = lambda b: sum(g.record is not None and g.table in ("t1", "t2")
                                 for g in b.finished.values()) == 2
        assert watcher.wait(finished, 30)
        for companion, table in zip(boxes, ("t1", "t2")):
            saved = parse_record(open(companion.service.status.saved_to).read())
            state = watcher.board.tables[table].state
            assert state["over"] and state["turn"] == len(saved.moves)
            assert len(_turns_seen(watcher, table)) > len(saved.moves) // 2   # shown turn by turn
            game = next(g for g in watcher.board.finished.values() if g.table == table)
            assert game.record["moves"] == list(saved.moves)
            assert list(game.scores) == [p["score"] for p in state["players"]]
    finally:
        for stop in stops:
            if stop:
                stop()
        for companion in boxes:
            companion.close()
        watcher.close()
        broker.kill()
    assert watcher.board.rejected == 0
