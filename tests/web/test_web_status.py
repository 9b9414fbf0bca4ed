"""Streamed exports equal the command line's, read in batches; the live feed's
heartbeat and the page's "the box stopped" note."""
from __future__ import annotations

import asyncio
import json
import os
import time

from firmware_py.service.feed import LIVE_FILE, STALE_SECONDS, FeedPublisher
from firmware_py.web.feed import feed_age
from firmware_py.store.export import (bgstats_chunks, csv_chunks, iter_rows_oldest_first,
                                      rows_oldest_first, to_bgstats, to_csv, to_jsonl)
from firmware_py.web.library import Library
from firmware_py.web.live import LiveHub
from firmware_py.web.stream import pieces
from web_helpers import fill_store


def test_exports_in_pieces_equal_the_whole_text(tmp_path):
    fill_store(tmp_path, 23)
    library = Library(tmp_path)
    with library.history.index() as index:
        assert [r["id"] for r in iter_rows_oldest_first(index, batch=5)] == \
            [r["id"] for r in rows_oldest_first(index)]
        assert len(list(csv_chunks(index, rows=4))) > 5          # really in pieces
        assert "".join(csv_chunks(index, rows=4)) == to_csv(index)
        whole = to_bgstats(index)
        streamed = json.loads("".join(bgstats_chunks(index)))
        jsonl = to_jsonl(index, library.history.records)
    for key in ("games", "players", "locations"):
        assert streamed[key] == whole[key]
    strip = [{k: v for k, v in p.items() if k != "entryDate"} for p in whole["plays"]]
    assert [{k: v for k, v in p.items() if k != "entryDate"} for p in streamed["plays"]] == strip
    assert library.export_text("jsonl") == jsonl and jsonl.count("\n") == 23


def test_the_stream_hands_over_pieces_and_raises_a_generators_error():
    def make():
        yield "a"
        yield "b"
        raise OSError("records/x.json: not JSON")

    async def read():
        got = []
        try:
            async for piece in pieces(make):
                got.append(piece)
        except OSError as exc:
            return got, str(exc)
        return got, ""
    assert asyncio.run(read()) == ([b"a", b"b"], "records/x.json: not JSON")


def test_a_quiet_publisher_still_touches_live_json(tmp_path, monkeypatch):
    import firmware_py.service.feed as feed
    monkeypatch.setattr(feed, "BEAT_SECONDS", 0.05)
    from test_feed import _capture, _ui_after
    from test_faults_rig import GOLDEN_RECORDS
    publisher = FeedPublisher(tmp_path)
    publisher.submit(_capture(_ui_after(GOLDEN_RECORDS[0], 3)))
    deadline = time.monotonic() + 10
    while not (tmp_path / LIVE_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    old = time.time() - 600
    os.utime(tmp_path / LIVE_FILE, (old, old))
    while feed_age(tmp_path) > 60 and time.monotonic() < deadline:
        time.sleep(0.01)
    publisher.close()
    assert feed_age(tmp_path) < STALE_SECONDS


def test_the_hub_says_when_the_box_stopped_and_when_it_is_back(tmp_path):
    from test_feed import _capture, _ui_after
    from test_faults_rig import GOLDEN_RECORDS
    publisher = FeedPublisher(tmp_path)
    (tmp_path / "feed").mkdir(mode=0o750)
    publisher.publish(_capture(_ui_after(GOLDEN_RECORDS[0], 3)))
    publisher._sock.close()
    hub = LiveHub(tmp_path)
    now = time.time()
    hub.check_alive(now)
    assert b"stopped_s" not in hub.event                    # just published: running
    hub.check_alive(now + STALE_SECONDS + 125)
    event = json.loads(hub.event.decode().split("data: ", 1)[1])
    assert event["stopped_s"] >= 125 and event["seq"] == hub.snapshot["seq"]
    before = hub.event
    hub.check_alive(now + STALE_SECONDS + 130)              # the same minute: not sent again
    assert hub.event is before
    hub.check_alive(now)                                    # heard of again
    assert b"stopped_s" not in hub.event


def test_the_page_gets_the_oleds_words_for_a_warning_and_the_full_text_beside():
    from firmware_py.service.feed import build_snapshot
    from test_feed import _capture, _ui_after
    from test_faults_rig import GOLDEN_RECORDS
    ui = _ui_after(GOLDEN_RECORDS[0], 3)
    full = "sensor offline: device lost (SerialException: device reports readiness)"
    ui.sensor_status(False, full)
    snap = build_snapshot(_capture(ui), 1, "run")
    assert snap["badge"] == "sensor unplugged" and full in snap["warnings"]
