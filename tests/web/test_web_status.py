"""Streamed exports equal the command line's, read in batches; the live feed's
lock (the service's sign of life) and the page's "the box stopped" note."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

from firmware_py.service.feed import LIVE_FILE, FeedPublisher
from firmware_py.web.feed import feed_age, service_running
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


def _wait_for(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_the_publisher_holds_the_feed_lock_while_it_runs_and_dates_its_stop(tmp_path):
    from test_feed import _capture, _ui_after
    from test_faults_rig import GOLDEN_RECORDS
    publisher = FeedPublisher(tmp_path)
    assert service_running(tmp_path) is None               # nothing published: nothing known
    publisher.submit(_capture(_ui_after(GOLDEN_RECORDS[0], 3)))
    _wait_for(lambda: (tmp_path / LIVE_FILE).exists(), "the first snapshot")
    assert service_running(tmp_path) is True
    assert service_running(tmp_path) is True               # a reader's test lets its own lock go
    old = time.time() - 600
    os.utime(tmp_path / LIVE_FILE, (old, old))             # quiet for ten minutes: still running
    assert service_running(tmp_path) is True
    publisher.close()
    assert service_running(tmp_path) is False
    assert feed_age(tmp_path) < 5                          # a clean stop dates itself


KILLED = """
import sys, time
from firmware_py.service.feed import FeedPublisher, ensure_folder
from pathlib import Path
publisher = FeedPublisher(ensure_folder(Path(sys.argv[1])))
publisher._hold_lock()
print("holding", flush=True)
time.sleep(60)
"""


def test_a_killed_service_is_known_stopped_at_once(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "holding"
        assert service_running(tmp_path) is True
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert service_running(tmp_path) is False              # the kernel let the lock go


def test_the_hub_says_when_the_box_stopped_and_when_it_is_back(tmp_path):
    from test_feed import _capture, _ui_after
    from test_faults_rig import GOLDEN_RECORDS
    (tmp_path / "feed").mkdir(mode=0o750)
    publisher = FeedPublisher(tmp_path)
    publisher.publish(_capture(_ui_after(GOLDEN_RECORDS[0], 3)))
    hub = LiveHub(tmp_path)
    now = time.time()
    hub.check_alive(now + 600)
    assert b"stopped_s" not in hub.event                   # quiet, but it runs
    publisher.close()
    hub.check_alive(now + 600 + 125)                       # last found running 125 s before
    event = json.loads(hub.event.decode().split("data: ", 1)[1])
    assert event["stopped_s"] == 125 and event["seq"] == hub.snapshot["seq"]
    before = hub.event
    hub.check_alive(now + 600 + 130)                       # the same minute: not sent again
    assert hub.event is before
    hub.check_alive(now + 600 + 185)                       # the next minute: sent again
    assert json.loads(hub.event.decode().split("data: ", 1)[1])["stopped_s"] == 185
    again = FeedPublisher(tmp_path)
    again.publish(_capture(_ui_after(GOLDEN_RECORDS[0], 4)))
    hub.check_alive(now + 700)                             # running again
    assert b"stopped_s" not in hub.event
    again.close()


def test_the_page_gets_the_oleds_words_for_a_warning_and_the_full_text_beside():
    from firmware_py.service.feed import build_snapshot
    from test_feed import _capture, _ui_after
    from test_faults_rig import GOLDEN_RECORDS
    ui = _ui_after(GOLDEN_RECORDS[0], 3)
    full = "sensor offline: device lost (SerialException: device reports readiness)"
    ui.sensor_status(False, full)
    snap = build_snapshot(_capture(ui), 1, "run")
    assert snap["badge"] == "sensor unplugged" and full in snap["warnings"]
