"""The sensor link's events reach the loop less the heartbeats that cannot change
anything (the same channels, the loop having shown nothing new since): an idle table
does not wake the loop once a second."""
from __future__ import annotations

from types import SimpleNamespace

from firmware_py.hw.sensor_link import SensorOccupancy, SensorStatus
from firmware_py.service.assembly import _NewsOnly


class _Loop:
    """Stands in for the service: its published ``status.seq`` and what was posted."""

    def __init__(self):
        self.status = SimpleNamespace(seq=1)
        self.posted: list = []

    def post(self, event) -> None:
        self.posted.append(event)


def _beat(channels, seq: int) -> SensorOccupancy:
    return SensorOccupancy(frozenset(channels), seq, True, float(seq))


def test_a_heartbeat_repeating_the_board_is_not_posted_while_the_loop_shows_nothing_new():
    loop = _Loop()
    post = _NewsOnly(loop)
    post(_beat({0}, 1))
    post(_beat({0}, 2))                       # the same board, nothing shown since: dropped
    assert [e.seq for e in loop.posted] == [1]
    post(_beat({0, 5}, 3))                    # a new board: posted
    loop.status = SimpleNamespace(seq=2)      # the loop showed something new
    post(_beat({0, 5}, 4))                    # the same board: posted once more
    post(_beat({0, 5}, 5))
    assert [e.seq for e in loop.posted] == [1, 3, 4]


def test_a_status_of_the_link_is_posted_and_lets_the_next_reading_through():
    loop = _Loop()
    post = _NewsOnly(loop)
    post(_beat({0}, 1))
    offline = SensorStatus(False, "sensor offline: silent for 1.6 s")
    post(offline)
    post(_beat({0}, 2))                       # the loop forgot the reading when offline
    assert loop.posted[1] is offline and [e.seq for e in loop.posted[::2]] == [1, 2]


def test_before_the_first_status_every_new_board_is_posted():
    loop = _Loop()
    loop.status = None
    post = _NewsOnly(loop)
    post(_beat({0}, 1))
    post(_beat({0}, 2))
    post(_beat({1}, 3))
    assert [e.seq for e in loop.posted] == [1, 3]
