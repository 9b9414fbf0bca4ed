"""``patchwork-companion calibrate``: the pure learning logic, the config edit, and
one whole run against the simulated sensor process."""
from __future__ import annotations

import random
import threading

import pytest

from firmware_py.bench import calibrate
from firmware_py.bench.calibrate import (ABOVE, CLEAR, DONE, FAILED, LIFT, PLACE, Ask, Calibrator,
                                   Settler, compact, two_point_range, updated_toml)
from firmware_py.config import ConfigError, default_text, load_config

PERM = list(range(54))
random.Random(7).shuffle(PERM)          # PERM[space] = the sensor channel under that space


def play(cal: Calibrator, channel_of, space_above, limit: int = 2000) -> list[Ask]:
    """Act as a careful maker: do what each ask says; returns every ask seen."""
    seen = []
    for _ in range(limit):
        ask = cal.ask
        seen.append(ask)
        if ask.kind in (DONE, FAILED):
            return seen
        if ask.kind in (CLEAR, LIFT):
            cal.reading(set())
        elif ask.kind == PLACE:
            cal.reading({channel_of[ask.space]})
        elif space_above[ask.led] is None:
            cal.skip()
        else:
            cal.reading({channel_of[space_above[ask.led]]})
    raise AssertionError("calibration did not end")


# ---------------------------------------------------------------------------- helpers
def test_compact_and_two_point_range():
    assert compact(list(range(54))) == "0-53"
    assert compact(list(range(53, -1, -1))) == "53-0"
    assert compact([3, 4, 5]) == "3-5"
    assert compact([0, 2, 1]) == [0, 2, 1]
    assert compact([7]) == [7]
    assert two_point_range(0, 53, 54, 53) == "0-53"
    assert two_point_range(53, 0, 54, 53) == "53-0"
    assert two_point_range(0, 53, 56, 53) is None     # spare LEDs: not one LED per space
    assert two_point_range(1, 53, 54, 53) is None
    assert two_point_range(None, 0, 54, 53) is None


def test_settler_gives_a_reading_once_it_stayed_unchanged():
    settler = Settler(0.15)
    assert settler.poll(0.0) is None
    settler.feed({3}, 1.0)
    assert settler.poll(1.1) is None and settler.due(1.1) == pytest.approx(0.05)
    settler.feed({3, 4}, 1.1)                   # a flicker restarts the wait
    assert settler.poll(1.2) is None
    assert settler.poll(1.26) == frozenset({3, 4})
    assert settler.poll(1.5) is None            # given once
    settler.feed({3, 4}, 1.6)                   # the same again (a heartbeat): nothing new
    assert settler.poll(2.0) is None and settler.due(2.0) is None
    settler.feed(set(), 2.0)
    assert settler.poll(2.2) == frozenset()


# --------------------------------------------------------------------- the learning
def test_permuted_channels_and_a_reversed_strip_are_learned_exactly():
    cal = Calibrator(53, 54)
    asks = play(cal, PERM, [53 - led for led in range(54)])
    assert cal.ask == Ask(DONE)
    assert cal.channels == PERM
    assert cal.maps() == (PERM, "53-0")
    assert [a.led for a in asks if a.kind == ABOVE] == [0, 53]     # two points were enough
    assert asks[1] == Ask(PLACE, space=0)
    lifted = next(a for a in asks if a.kind == LIFT)
    assert lifted.accepted and lifted.found == PERM[0]
    assert lifted.text(53) == f"Got it: space 0 is channel {PERM[0]}. Take the token off"
    assert asks[1].text(53) == "Put a token on space 0 (of 0..53), take it off when it blinks"


def test_a_straight_board_gives_plain_ranges():
    cal = Calibrator(29, 30)
    play(cal, list(range(30)), list(range(30)))
    assert cal.maps() == ("0-29", "0-29")


def test_zero_several_and_duplicate_channels_are_rejected_and_asked_again():
    cal = Calibrator(53, 54)
    cal.reading(set())
    assert cal.ask == Ask(PLACE, space=0)
    cal.reading({PERM[0]})
    cal.reading(set())
    assert cal.ask == Ask(PLACE, space=1)
    # zero: the maker says the token is on, but no channel changed
    assert cal.nothing() == Ask(PLACE, space=1, note="no channel sees a token on space 1")
    # several: two channels at once
    cal.reading({PERM[1], PERM[2]})
    note = f"2 channels ({', '.join(map(str, sorted((PERM[1], PERM[2]))))}) see a token: " \
           "use one token, centred on the space"
    assert cal.ask == Ask(LIFT, space=1, note=note)
    assert cal.ask.text(53) == f"{note}. Take the token off to try again"
    cal.reading({PERM[1]})                      # not yet clear: still waiting
    assert cal.ask.kind == LIFT
    cal.reading(set())
    assert cal.ask == Ask(PLACE, space=1, note=note)
    # duplicate: space 0's channel again
    cal.reading({PERM[0]})
    dup = f"channel {PERM[0]} is already space 0's"
    assert cal.ask == Ask(LIFT, space=1, note=dup)
    cal.reading(set())
    assert cal.ask == Ask(PLACE, space=1, note=dup)
    assert cal.channels[1] is None
    # then the right one, and the rest
    play(cal, PERM, [53 - led for led in range(54)])
    assert cal.maps() == (PERM, "53-0")


def test_led_phase_rejects_unknown_channels_and_spaces_given_twice():
    cal = Calibrator(3, 4)
    play_until = [0, 1, 2, 3]
    for space in play_until:
        cal.reading(set())
        cal.reading({10 + space})
    cal.reading(set())
    assert cal.ask == Ask(ABOVE, led=0)
    cal.reading({99})
    assert cal.ask.note == "channel 99 belongs to no space"
    cal.reading(set())
    cal.reading({12})                           # LED 0 is under space 2: not an end
    cal.reading(set())
    assert cal.ask == Ask(ABOVE, led=3)
    cal.reading({12})                           # space 2 again
    assert cal.ask.note == "space 2 already has LED 0"
    cal.reading(set())
    cal.reading({11})                           # LED 3 over space 1: no range, so per LED
    cal.reading(set())
    assert cal.ask == Ask(ABOVE, led=1)
    for led, channel in ((1, 13), (2, 10)):
        assert cal.ask == Ask(ABOVE, led=led)
        cal.reading({channel})
        cal.reading(set())
    assert cal.ask == Ask(DONE)
    assert cal.maps() == ("10-13", [2, 3, 0, 1])


def test_spare_leds_fall_back_to_asking_led_by_led():
    """56 LEDs, the first two under no space: the two ends make no range, so each
    LED is asked (NEXT skips the spare ones) until every space has its LED."""
    above = [None, None] + list(range(54))
    cal = Calibrator(53, 56)
    asks = play(cal, PERM, above)
    assert cal.maps() == (PERM, "2-55")
    assert [a.led for a in asks if a.kind == ABOVE][:4] == [0, 55, 1, 2]


def test_a_space_without_an_led_fails():
    cal = Calibrator(2, 3)
    asks = play(cal, [0, 1, 2], [1, None, 2])
    assert asks[-1] == Ask(FAILED, note="no LED under spaces 0")
    with pytest.raises(ValueError):
        cal.maps()


def test_a_board_with_a_stuck_channel_can_be_declared_clear():
    cal = Calibrator(1, 2)
    cal.reading({40})
    assert cal.ask == Ask(CLEAR)
    assert cal.nothing() == Ask(PLACE, space=0, note="ignoring channels 40 that see a token "
                                "on a clear board")
    cal.reading({40, 5})
    assert cal.ask.kind == LIFT and cal.ask.found == 5
    cal.reading({40})
    assert cal.ask == Ask(PLACE, space=1)


def test_oled_screens_fit_the_instruction_and_tag_a_retry():
    from firmware_py.bench.calibrate import oled_screen
    assert oled_screen(Ask(PLACE, space=12), 53) == (
        "Space 12 of 0..53", "Put a token on space 12, take it off when it blinks",
        "OK: it is on, not seen", "")
    assert oled_screen(Ask(ABOVE, led=0, note="x"), 53)[::3] == ("LED 0", "retry")
    assert oled_screen(Ask(LIFT, space=12, accepted=True, found=7), 53)[:2] == (
        "Got it", "Space 12 is channel 7. Take the token off")


# ------------------------------------------------------------------- the config file
def test_updated_toml_keeps_comments_and_other_keys():
    text = default_text()
    out = updated_toml(text, "patchwork", PERM, "53-0")
    assert "# sensor channel of each space 0..53" in out
    assert "hold_seconds = 1.0    # a press held this long is a hold" in out
    assert len(out.splitlines()) == len(text.splitlines())
    express = updated_toml(text, "patchwork-express", "29-0", [29 - i for i in range(30)])
    assert 'map_express = "29-0"' in express and 'map = "0-53"' in express


def test_updated_toml_adds_missing_sections_and_rejects_bad_maps():
    out = updated_toml('backend = "sim"\n', "patchwork", "0-53", "53-0")
    assert out == 'backend = "sim"\n\n[sensor]\nmap = "0-53"\n\n[leds]\nmap = "53-0"\n'
    with pytest.raises(ConfigError, match="leds.map: LED 60 for space 0 is outside the strip"):
        updated_toml(default_text(), "patchwork", "0-53", "60-7")


def test_write_needs_a_config_file(capsys):
    assert calibrate.main(None, "patchwork", write=True) == 2
    assert "--write needs --config FILE" in capsys.readouterr().err


# ------------------------------------------------------------- a run in simulation
class PermutedBoard:
    """The maker at a simulated board whose sensor channels are ``PERM`` and
    whose strip runs backwards (LED i under space 53 - i). The simulated
    sensor reports channel numbers, so a token "on space s" is placed on
    ``PERM[s]``. The first ask for space 5 gets two tokens (rejected)."""

    def __init__(self, interrupt_at: int | None = None):
        self.placed: list[int] = []
        self.fumbled = False
        self.interrupt_at = interrupt_at
        self.asks: list[Ask] = []
        self.thread = threading.current_thread()

    def __call__(self, ask: Ask, parts) -> None:
        assert threading.current_thread() is self.thread
        self.asks.append(ask)
        sensor = parts.sim_sensor
        if ask.kind in (CLEAR, LIFT):
            for token in self.placed:
                sensor.command("lift", token=token)
            self.placed = []
        elif ask.kind == PLACE and ask.space == self.interrupt_at:
            raise KeyboardInterrupt
        elif ask.kind == PLACE and ask.space == 5 and not self.fumbled:
            self.fumbled = True
            self._place(sensor, 0, PERM[5])
            self._place(sensor, 1, PERM[6])
        elif ask.kind == PLACE:
            self._place(sensor, 0, PERM[ask.space])
        elif ask.kind == ABOVE:
            self._place(sensor, 0, PERM[53 - ask.led])

    def _place(self, sensor, token: int, channel: int) -> None:
        sensor.command("place", token=token, space=channel)
        self.placed.append(token)


def sim_config(tmp_path):
    text = default_text().replace("stable_ms = 150", "stable_ms = 20")
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path, text


def test_calibrating_a_permuted_board_in_simulation_writes_the_maps(tmp_path):
    path, before = sim_config(tmp_path)
    lines: list[str] = []
    board = PermutedBoard()
    status = calibrate.main(str(path), "patchwork", write=True, say=lines.append, maker=board,
                            timeout=45)
    assert status == 0, "\n".join(lines[-10:])
    cfg = load_config(path)                      # validates
    assert cfg["sensor"]["map"] == PERM
    assert cfg["leds"]["map"] == "53-0"
    assert cfg["sensor"]["map_express"] == "" and cfg["leds"]["map_express"] == "0-29"
    after = path.read_text()
    assert "# sensor channel of each space 0..53" in after
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert [b.split("=")[0].strip() for _, b in changed] == ["map", "map"]
    assert lines[-1] == f"wrote sensor.map and leds.map to {path}"
    # the fumble on space 5 was rejected and space 5 asked again
    rejected = f"2 channels ({', '.join(map(str, sorted((PERM[5], PERM[6]))))}) see a token"
    assert any(line.startswith(rejected) for line in lines)
    assert [a.space for a in board.asks if a.kind == PLACE].count(5) == 2
    assert "Put a token on space 12 (of 0..53), take it off when it blinks" in lines
    assert [a.led for a in board.asks if a.kind == ABOVE] == [0, 53]
    assert list(tmp_path.iterdir()) == [path]     # no temporary files left


def test_ctrl_c_leaves_the_config_file_untouched(tmp_path):
    path, before = sim_config(tmp_path)
    lines: list[str] = []
    status = calibrate.main(str(path), "patchwork", write=True, say=lines.append,
                            maker=PermutedBoard(interrupt_at=3), timeout=30)
    assert status == 130
    assert lines[-1] == "calibration cancelled: nothing written"
    assert path.read_text() == before
    assert list(tmp_path.iterdir()) == [path]
