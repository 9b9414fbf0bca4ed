"""The token-sensor link under faults, through the running companion.

The whole companion runs on the sim backend with the simulated sensor process
on a pty; faults are the sensor process's own ops (unplug, replug under
another name, silence, garbage, bit flips, split writes, boot banner, stuck
space). Each test checks what the players see (``service.status``): "sensor
offline" on the OLED within 2 s of losing the link, no move ever made from a
bad frame, the game resumed from a snapshot when the sensor is back, and both
the loop and the link thread still running at the end.
"""
from __future__ import annotations

import time

import pytest

from firmware_py.sim.hands import Hands

from test_faults_rig import (GOLDEN_RECORDS, board_seen, fast_config, game_view, start_table,
                             wait_until)

RECORD = GOLDEN_RECORDS[0]         # first turn: both tokens on 0; advance ends on 1, no buy does


@pytest.fixture
def table(tmp_path):
    """A running companion whose link looks for ``patchwork-sensor`` then ``sensor-*``."""
    companions = []

    def start(**kwargs):
        kwargs.setdefault("ports", [str(tmp_path / "patchwork-sensor"), str(tmp_path / "sensor-*")])
        companion = start_table(tmp_path, RECORD, **kwargs)
        companions.append(companion)
        wait_until(lambda: "sensor" not in warning(companion), "the sensor to come online")
        return companion
    yield start
    for companion in companions:
        alive = (companion.service._thread.is_alive(), companion.link._thread.is_alive())
        companion.close()
        assert alive == (True, True), "the loop or the link thread died"


def warning(companion) -> str:
    """The warning line of the OLED screen now."""
    return companion.service.status.screen.warning


def offline(text: str) -> bool:
    """The OLED's badge says the sensor is gone (in the players' words: offline,
    unplugged, silent)."""
    return any(w in text for w in ("sensor offline", "sensor unplugged", "sensor silent"))


def offline_within_two_seconds(companion, since: float) -> float:
    """Wait for the sensor said offline on the OLED; returns how long it took from ``since``."""
    wait_until(lambda: offline(warning(companion)), "sensor offline on the OLED", 4.0)
    took = time.monotonic() - since
    assert took < 2.0, f"'sensor offline' took {took:.2f} s"
    return took


def turns(companion) -> int:
    """Turns accepted in the current game."""
    return game_view(companion.service)[0]


def test_unplugged_then_replugged_under_another_name_resumes_from_a_snapshot(table, tmp_path):
    """Unplugged: offline within 2 s; the token moved meanwhile; back as sensor-b: the move is read from the snapshot."""
    companion = table()
    sim = companion.parts.sim_sensor
    sim.command("unplug")
    sim.sync()
    offline_within_two_seconds(companion, time.monotonic())
    sim.command("move", token=0, to=1, style="lift")        # moved while the sensor was away
    sim.command("replug", link=str(tmp_path / "sensor-b"))  # back, as another device
    sim.sync()
    wait_until(lambda: "sensor" not in warning(companion), "the sensor back online", 5.0)
    # both tokens stood on 0, where a knocked token looks like a move: the table asks
    wait_until(lambda: companion.service.status.mode == "confirm", "the move seen in the snapshot")
    assert companion.service.status.screen.options == ("advance",) and turns(companion) == 0
    Hands(companion).press("ok")
    wait_until(lambda: turns(companion) == 1, "the move seen in the snapshot to be accepted")
    assert game_view(companion.service)[1] == ["advance"]
    stats = companion.link.stats()
    assert stats.device.endswith("sensor-b") and stats.reconnects >= 1


def test_a_device_that_vanishes_mid_slide_never_turns_half_a_slide_into_a_move(table, tmp_path):
    """Green slides 0 -> 5 (a buy); at space 1 (where the advance would end) the cable is
    pulled. That last reading must not become "stable" while nobody watches the board."""
    companion = table(cfg=fast_config(sensor={"stable_ms": 300},
                                      sim={"sensor_link": str(tmp_path / "sensor-a"), "speed": 4.0}))
    service = companion.service
    sim = companion.parts.sim_sensor
    sim.command("place", token=0, space=1)                  # mid-slide: {0, 1} is the advance
    sim.sync()
    sim.command("unplug")
    sim.sync()
    offline_within_two_seconds(companion, time.monotonic())
    modes = {service.status.mode}
    deadline = time.monotonic() + 0.6                       # twice the stable time, offline
    while time.monotonic() < deadline:
        modes.add(service.status.mode)
        time.sleep(0.01)
    assert modes == {"turn"} and turns(companion) == 0
    sim.command("place", token=0, space=5)                  # the slide ends while unplugged
    sim.command("replug", link=str(tmp_path / "sensor-b"))
    sim.sync()
    wait_until(lambda: service.status.mode == "confirm", "the buy seen after the link is back")
    assert turns(companion) == 0
    Hands(companion).press("ok")
    wait_until(lambda: turns(companion) == 1, "the confirmed buy")
    assert game_view(service)[1] == [{"buy": 23}]


def test_silence_says_offline_within_two_seconds_and_the_link_comes_back(table):
    """2.5 s of silence: offline within 2 s, then online again with the game unchanged."""
    companion = table()
    sim = companion.parts.sim_sensor
    sim.command("silence", seconds=2.5)
    sim.sync()
    offline_within_two_seconds(companion, time.monotonic())
    wait_until(lambda: "sensor" not in warning(companion), "the sensor back online", 5.0)
    board_seen(companion, {0})
    assert game_view(companion.service)[0::2] == (0, "turn")


def test_bad_frames_split_at_every_byte_and_glued_to_noise_never_make_a_move(table):
    """Every bad frame here, if trusted, would be exactly the legal advance {0, 1}."""
    companion = table()
    sim = companion.parts.sim_sensor
    sim.command("split_writes", on=True)                    # every byte on its own
    sim.command("corrupt_next", count=3, byte=-8, bit=1)    # bitmap ...1 -> ...3: spaces {0, 1}
    sim.command("garbage", bytes="$PW,BEAT,77,54,00000000000003*0000\r\n")   # bad CRC
    sim.command("garbage", bytes="\x00\xff\x1b[2Jnoise$PW,CHG,78,54,1,ON,00000000000003*FFFF")
    sim.command("garbage", bytes="\r\n$PW,SNAP,79,54,000000000000\x003*1D0F\r\n")
    sim.command("banner")
    sim.command("garbage", bytes="\x00\xfe noise glued to the next frame ")
    sim.sync()
    wait_until(lambda: companion.link.stats().crc_errors >= 4, "the bad frames to be counted")
    time.sleep(1.2)                                         # longer than stable + guidance
    board_seen(companion, {0})
    assert turns(companion) == 0
    stats = companion.link.stats()
    assert stats.garbage_lines >= 3 and stats.malformed + stats.crc_errors >= 5
    hands = Hands(companion)                                # the real move still counts, once
    hands.move(0, 1, "slide")
    wait_until(lambda: companion.service.status.mode == "confirm",   # from a shared space:
               "the real move, sent byte by byte")                   # asked (a knock?)
    hands.press("ok")
    wait_until(lambda: turns(companion) == 1, "the real move accepted")
    board_seen(companion, {0, 1})
    assert game_view(companion.service)[1] == ["advance"]


def test_a_boot_banner_and_lost_first_bytes_after_opening_are_ignored(table, tmp_path):
    """A reboot's banner and frame tails without their start: ignored, online, no move."""
    companion = table()
    sim = companion.parts.sim_sensor
    sim.command("replug", link=str(tmp_path / "sensor-a"))  # the sensor reboots
    sim.command("banner")
    sim.command("garbage", bytes="54,00000000000003*1A2B\r\nPW,CHG,3,54,1,ON,0000")  # a tail only
    sim.sync()
    wait_until(lambda: companion.link.stats().reconnects >= 1, "the link to reopen the sensor")
    wait_until(lambda: "sensor" not in warning(companion), "the sensor back online", 5.0)
    sim.command("banner")                                   # and again while the link is open
    sim.command("garbage", bytes="0000003*9F3C\r\n")
    sim.sync()
    time.sleep(1.2)
    board_seen(companion, {0})
    assert turns(companion) == 0 and "sensor" not in warning(companion)


def test_a_rising_error_rate_warns_before_the_link_is_declared_dead(table):
    """Corrupted frames: 'sensor link errors' on the OLED first, then offline, then recovered."""
    companion = table()
    sim = companion.parts.sim_sensor
    seen: list[str] = []

    def watch():
        text = warning(companion)
        if not seen or seen[-1] != text:
            seen.append(text)
        return offline(text)

    sim.command("corrupt_next", count=14)
    sim.command("place", token=1, space=2)                  # knocked: changes to report
    wait_until(watch, "the link declared dead", 8.0)
    first_warning = next(i for i, w in enumerate(seen) if "sensor" in w)
    assert "sensor link errors" in seen[first_warning], seen   # warned first...
    assert not offline(seen[first_warning])                    # ...before offline
    wait_until(lambda: "sensor" not in warning(companion), "the link to recover", 6.0)
    sim.command("place", token=1, space=0)
    sim.sync()
    board_seen(companion, {0})
    assert turns(companion) == 0


def test_a_stuck_sensor_gets_guidance_never_a_move_and_the_buttons_still_play(table):
    """A space stuck occupied: guidance names it, the token's move is not taken, OK twice plays it."""
    companion = table(turns=1)                              # green on 1, yellow on 0 to move
    service = companion.service
    sim = companion.parts.sim_sensor
    sim.command("stuck", space=9, on=True)                  # space 9 reads occupied for ever
    sim.sync()
    wait_until(lambda: service.status.screen.kind == "mismatch", "guidance about space 9", 4.0)
    assert "Nothing belongs on 9." in service.status.screen.lines
    assert 9 in service.status.lights.wrong
    hands = Hands(companion)
    hands.move(1, 2, "slide")                               # the legal advance, but 9 still lit
    board_seen(companion, {1, 2, 9})
    time.sleep(0.3)
    assert turns(companion) == 1                            # no move out of that reading
    hands.press("next", 4)                                  # NEXT to "advance" (3 patches first)
    assert service.call(lambda: service.view.intent) is not None
    hands.press("ok")
    hands.press("ok")                                       # OK twice: the buttons decide
    wait_until(lambda: turns(companion) == 2, "the turn entered with the buttons")
    assert game_view(companion.service)[1] == ["advance", "advance"]
