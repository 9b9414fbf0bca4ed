"""The live feed: snapshot contents, delivery over AF_UNIX datagrams, and that no consumer
(slow, absent, never reading) and no stuck publisher can hold up the game loop."""
from __future__ import annotations

import base64
import io
import json
import socket
import threading
import time

from PIL import Image

from firmware_py.service.assembly import start_companion
from firmware_py.companion.screens import build_lights, build_screen
from table_helpers import TableRig
from firmware_py.sim.demo import demo_config
from firmware_py.service.feed import FeedPublisher, build_snapshot, capture_view, feed_dir
from firmware_py.web.feed import FeedSubscriber, read_live
from firmware_py.rules import parse_record, replay, tally
from firmware_py.sim.hands import Hands
from firmware_py.view.oled import render
from table_helpers import ui_after
from test_faults_rig import GOLDEN_RECORDS, wait_until


def _ui_after(record, turns: int) -> TableRig:
    """A table UI resumed ``turns`` turn groups into ``record`` (no hardware)."""
    return ui_after(record, turns)


def _capture(ui):
    return capture_view(ui.view(), ui.warnings, build_screen(ui.view(), ui.warnings.values()), build_lights(ui.view()))


def test_snapshot_carries_the_table_exactly():
    record = GOLDEN_RECORDS[0]
    ui = _ui_after(record, 12)
    state = ui.state
    snap = build_snapshot(_capture(ui), 7, "run1", now=1000.0)
    assert (snap["seq"], snap["run"], snap["at"], snap["mode"]) == (7, "run1", 1000.0, "turn")
    assert snap["turn"] == len(ui.session.groups)
    assert snap["moves"] == list(ui.session.record().moves)
    replayed, _ = replay(parse_record(snap["record"]))
    assert replayed.players == state.players and replayed.offer == state.offer
    assert snap["game"] == record.game and snap["time_board"] == record.time_board
    assert snap["offer"] == list(state.offer[:3])
    colours = ui.session.setup.colours
    assert snap["to_move"] == colours[state.to_move]
    assert [p["colour"] for p in snap["players"]] == list(colours)
    for row, player, i in zip(snap["players"], state.players, (0, 1)):
        assert (row["position"], row["buttons"], row["income"], row["empty"]) == \
            (player.position, player.buttons, player.income, player.empty)
        assert row["score"] == tally(state).scores[i]
        assert row["name"] == colours[i].capitalize()
    screen = build_screen(ui.view(), ui.warnings.values())
    png = Image.open(io.BytesIO(base64.b64decode(snap["oled"]["png"])))
    assert png.size == (128, 64)
    assert png.convert("1").tobytes() == render(screen).tobytes()
    assert snap["oled"]["lines"][0] == screen.title
    assert len(snap["leds"]) == state.spec.last_space + 1
    green_space = state.players[colours.index("green")].position
    assert snap["leds"][green_space] == [0, 200, 0] or \
        state.players[0].position == state.players[1].position
    assert snap["over"] is False and snap["winner"] is None
    assert json.loads(json.dumps(snap)) == snap          # plain JSON throughout


def test_snapshot_at_the_end_names_the_winner():
    record = GOLDEN_RECORDS[1]
    ui = _ui_after(record, 10_000)
    snap = build_snapshot(_capture(ui), 1, "r")
    result = tally(ui.state)
    assert snap["over"] is True and snap["mode"] == "end"
    assert snap["winner"] == ui.session.setup.colours[result.winner]
    assert snap["scores"] == result.scores and snap["to_move"] is None


def test_a_game_id_names_the_setup_not_the_turn():
    record = GOLDEN_RECORDS[0]
    a = build_snapshot(_capture(_ui_after(record, 3)), 1, "r")
    b = build_snapshot(_capture(_ui_after(record, 9)), 2, "r")
    c = build_snapshot(_capture(_ui_after(GOLDEN_RECORDS[2], 3)), 3, "r")
    assert a["game_id"] == b["game_id"] != c["game_id"]
    assert len(a["game_id"]) == 12


def test_subscriber_receives_each_snapshot_and_live_json_holds_the_last(tmp_path):
    sub = FeedSubscriber(tmp_path, "web")
    pub = FeedPublisher(tmp_path)
    try:
        ui = _ui_after(GOLDEN_RECORDS[0], 4)
        first = pub.publish(_capture(ui))
        got = sub.receive(timeout=5)
        assert got == json.loads(json.dumps(first))
        ui2 = _ui_after(GOLDEN_RECORDS[0], 5)
        pub.publish(_capture(ui2))
        assert sub.receive(timeout=5)["turn"] == len(ui2.session.groups)
        assert read_live(tmp_path)["seq"] == 2
    finally:
        sub.close()
        pub.close()


def test_a_consumer_that_never_reads_and_a_stale_socket_never_block_the_publisher(tmp_path):
    """The publisher's thread must not wait for anybody: a full consumer queue and a socket
    file with nobody behind it cost a dropped datagram, nothing more."""
    deaf = FeedSubscriber(tmp_path, "deaf")                 # bound, never reads
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    stale.bind(str(tmp_path / "feed" / "gone.sock"))
    stale.close()                                           # its file stays: ECONNREFUSED
    pub = FeedPublisher(tmp_path)
    cap = _capture(_ui_after(GOLDEN_RECORDS[0], 6))
    done = threading.Event()

    def flood():
        for _ in range(1500):       # more than any AF_UNIX datagram queue holds
            pub.publish(cap)
        done.set()

    worker = threading.Thread(target=flood, daemon=True)
    worker.start()
    worker.join(30)
    try:
        assert done.is_set(), "the publisher blocked on a consumer"
        assert pub.dropped >= 1500                    # the stale one: every datagram
        assert pub.sent >= 1 and pub.dropped > 1500   # the deaf one's queue filled up
        assert read_live(tmp_path)["seq"] == 1500
        # once the consumer reads again, it gets new snapshots
        while deaf.drain() is not None:
            pass
        pub.publish(cap)
        assert deaf.receive(timeout=5)["seq"] == 1501
    finally:
        deaf.close()
        pub.close()


def test_the_loop_never_waits_for_a_stuck_publisher(tmp_path):
    """The loop only hands captures over: with the publisher's thread stuck the game goes
    on, and once it is free it publishes the latest state (older ones are skipped)."""
    cfg = demo_config(fast=True)
    companion = start_companion(cfg, folder=tmp_path / "journal", feed=tmp_path / "feed")
    release = threading.Event()
    real_publish = companion.feed.publish
    calls = []

    def stuck(cap):
        calls.append(cap.mode)
        release.wait(60)
        return real_publish(cap)

    companion.feed.publish = stuck
    try:
        hands = Hands(companion, timeout=10)
        wait_until(lambda: companion.service.status is not None, "the first frame")
        hands.press("ok")                                  # Patchwork
        hands.press("ok")                                  # 2014 board
        hands.press("ok")                                  # two players
        hands.press("next")                                # Yellow starts
        hands.press("ok")
        assert companion.service.status.mode == "setup_layout"
        # only what went out before the publisher got stuck (the first screen, maybe)
        assert (read_live(tmp_path / "feed") or {}).get("mode") in (None, "setup_game")
        release.set()
        wait_until(lambda: (read_live(tmp_path / "feed") or {}).get("mode") == "setup_layout",
                   "the latest state on the feed")
        assert len(calls) < 6      # skipped what was superseded while stuck
    finally:
        release.set()
        companion.close()


def test_a_running_companion_feeds_a_subscriber(tmp_path):
    sub = FeedSubscriber(tmp_path / "feed", "web")
    companion = start_companion(demo_config(fast=True), folder=tmp_path / "journal",
                                feed=tmp_path / "feed")
    try:
        hands = Hands(companion, timeout=10)
        hands.press("next")
        deadline = time.monotonic() + 10
        seen = None
        while time.monotonic() < deadline:
            snap = sub.receive(timeout=1)
            if snap and snap["mode"] == "setup_game" and "> Patchwork Express" in snap["oled"]["lines"]:
                seen = snap
                break
        assert seen is not None
        assert seen["game_id"] is None and seen["players"] == []
    finally:
        companion.close()
        sub.close()


def test_feed_dir_follows_config_then_systemd_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("RUNTIME_DIRECTORY", "/run/patchwork-companion")
    assert str(feed_dir({"feed": {"dir": str(tmp_path)}})) == str(tmp_path)
    assert str(feed_dir({"feed": {"dir": ""}})) == "/run/patchwork-companion"
    monkeypatch.delenv("RUNTIME_DIRECTORY")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert str(feed_dir({})) == "/run/user/1000/patchwork-companion"


def test_a_web_pin_shows_on_the_oled_but_never_on_the_feed(tmp_path):
    from firmware_py.web.feed import send_control
    frames = []
    companion = start_companion(demo_config(fast=True), folder=tmp_path / "journal",
                                feed=tmp_path / "feed", on_oled_frame=frames.append)
    try:
        send_control(tmp_path / "feed", "424242", 60)
        wait_until(lambda: "PIN 424242" in companion.service.status.screen.warning,
                   "the PIN on the OLED")
        companion.service.call(lambda: None)
        Hands(companion, timeout=10).press("next")         # another snapshot after the PIN
        wait_until(lambda: "> Patchwork Express" in (read_live(tmp_path / "feed") or {})
                   .get("oled", {}).get("lines", []), "the feed after the PIN")
        text = (tmp_path / "feed" / "live.json").read_text()
        assert "424242" not in text
        shown = render(companion.service.status.screen)
        png = Image.open(io.BytesIO(base64.b64decode(read_live(tmp_path / "feed")["oled"]["png"])))
        assert png.convert("1").tobytes() != shown.tobytes()   # the OLED has the tag, the feed not
        assert companion.service.status.mode == "setup_game"  # nothing in the game changed
    finally:
        companion.close()


def test_bad_control_messages_are_refused_with_a_reason():
    import pytest
    from firmware_py.service.feed import parse_control
    assert parse_control(b'{"show_pin": "012345", "seconds": 300}').pin == "012345"
    for bad, why in ((b"nope", "not JSON"), (b'{"show_pin": "12a456", "seconds": 300}', "6 digits"),
                     (b'{"show_pin": "123456", "seconds": 5}', "60..3600"),
                     (b'{"show_pin": "123456", "seconds": 60, "undo": 1}', "must be")):
        with pytest.raises(ValueError, match=why):
            parse_control(bad)


def test_an_unchanged_table_is_not_published_again(tmp_path):
    pub = FeedPublisher(tmp_path)
    cap = _capture(_ui_after(GOLDEN_RECORDS[0], 5))
    try:
        for _ in range(3):
            pub.submit(cap)
            wait_until(lambda: pub._pending is None, "the publisher to take it")
        pub.submit(_capture(_ui_after(GOLDEN_RECORDS[0], 6)))
        wait_until(lambda: pub.published == 2, "the changed table")
        pub.close()
        assert pub.published == 2 and read_live(tmp_path)["seq"] == 2
    finally:
        pub.close()


def test_a_feed_folder_of_another_user_is_not_used(tmp_path):
    import os
    import pytest
    from firmware_py.service.feed import ControlListener
    if os.getuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    folder = tmp_path / "squatted"
    (folder / "feed").mkdir(parents=True)
    os.chown(folder, 12345, 12345)
    with pytest.raises(PermissionError, match="belongs to user 12345"):
        FeedSubscriber(folder, "web")
    with pytest.raises(PermissionError):
        ControlListener(folder, lambda event: None)
    pub = FeedPublisher(folder)
    pub.submit(_capture(_ui_after(GOLDEN_RECORDS[0], 3)))
    wait_until(lambda: pub.failed, "the publisher to refuse the folder")
    pub.close()
    assert "belongs to user 12345" in pub.failed and not (folder / "live.json").exists()


def test_the_board_colours_show_where_tokens_must_go_and_leave_at_once():
    from firmware_py.companion.model import Lights
    from firmware_py.service.feed import space_colours
    from firmware_py.view.leds import RED, TOKEN_RGB, WHITE
    lights = Lights(53, (("green", 3), ("yellow", 7)), "green", expected=frozenset({9}),
                    wrong=frozenset({12}))
    colours = space_colours(lights)
    assert len(colours) == 54
    assert (colours[9], colours[12]) == (list(WHITE), list(RED))
    assert colours[3] == list(TOKEN_RGB["green"]) and colours[7] == list(TOKEN_RGB["yellow"])
    assert colours[20] == [0, 0, 0]
