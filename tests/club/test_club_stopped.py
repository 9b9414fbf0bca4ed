"""The club scoreboard says when a box's game service stopped: the box's bridge sees
the service let the live feed's lock go and marks its table offline; the board says
for how long."""
from __future__ import annotations

from firmware_py.club.board import Board
from firmware_py.club.feedlink import FeedLink
from firmware_py.service.feed import FeedPublisher


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
    from test_feed import _capture, _ui_after
    from test_faults_rig import GOLDEN_RECORDS
    (tmp_path / "feed").mkdir(mode=0o750)
    link = FeedLink.__new__(FeedLink)           # the watch alone, no socket or thread
    link.folder, link.running, link.bridge = tmp_path, None, Said()
    link.watch_service()                        # nothing published yet: not called stopped
    publisher = FeedPublisher(tmp_path)
    publisher.publish(_capture(_ui_after(GOLDEN_RECORDS[0], 3)))
    link.watch_service()
    assert link.bridge.running == [True]
    publisher.close()
    link.watch_service()
    link.watch_service()
    assert link.bridge.running == [True, False]
    again = FeedPublisher(tmp_path)
    again.publish(_capture(_ui_after(GOLDEN_RECORDS[0], 4)))
    link.watch_service()
    assert link.bridge.running == [True, False, True]
    again.close()
