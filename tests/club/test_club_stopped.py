"""The club scoreboard says when a box's game service stopped: the box's bridge sees
the live feed go quiet and marks its table offline; the board says for how long."""
from __future__ import annotations

import os
import time

from firmware_py.club.board import Board
from firmware_py.club.feedlink import FeedLink
from firmware_py.service.feed import LIVE_FILE, STALE_SECONDS


def test_the_board_says_how_long_a_table_has_been_offline():
    board = Board("c")
    board.message("patchwork/c/t1/status", b"online", 100.0)
    assert board.rows(130.0)[0]["offline_s"] is None
    board.message("patchwork/c/t1/status", b"offline", 200.0)
    assert board.rows(200.0 + 7 * 60)[0]["offline_s"] == 7 * 60
    board.message("patchwork/c/t1/status", b"offline", 300.0)      # said again: same start
    assert board.snapshot(200.0 + 60)["tables"][0]["offline_s"] == 60
    board.message("patchwork/c/t1/status", b"online", 400.0)
    assert board.rows(500.0)[0]["offline_s"] is None


class Said:
    """Records what the feed link tells the bridge (the bridge's one method used here)."""

    def __init__(self):
        self.running: list[bool] = []

    def service_running(self, running: bool) -> None:
        self.running.append(running)


def test_the_feed_link_tells_the_bridge_when_the_service_stops_and_runs_again(tmp_path):
    (tmp_path / LIVE_FILE).write_text("{}")
    link = FeedLink.__new__(FeedLink)           # the watch alone, no socket or thread
    link.folder, link.running, link.bridge = tmp_path, None, Said()
    now = time.time()
    link.watch_service(now)
    link.watch_service(now + 1)
    assert link.bridge.running == [True]
    old = now - STALE_SECONDS - 60
    os.utime(tmp_path / LIVE_FILE, (old, old))
    link.watch_service(now)
    assert link.bridge.running == [True, False]
    os.utime(tmp_path / LIVE_FILE, (now, now))
    link.watch_service(now)
    assert link.bridge.running == [True, False, True]
