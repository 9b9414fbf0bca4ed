"""The LED strip renderer: layouts, colours, animation phases, errors."""
from __future__ import annotations

import pytest

from firmware_py.companion.model import GREEN, YELLOW, Lights
from firmware_py.view.leds import (FRAME_INTERVAL, INCOME_RGB, LEATHER_RGB, OFF, RED, WHITE,
                                   LedLayout, led_frame, next_change, pulse)

G_RGB, Y_RGB = (0, 200, 0), (230, 160, 0)
STRAIGHT = LedLayout.parse("0-53", 54, 53)
REVERSED = LedLayout.parse("53-0", 54, 53)


def lights(**kw) -> Lights:
    """Patchwork lights (spaces 0..53) with green on 3 and yellow on 10."""
    kw.setdefault("tokens", ((GREEN, 3), (YELLOW, 10)))
    return Lights(last_space=53, **kw)


# --- layouts ---------------------------------------------------------------

def test_parse_ranges_both_directions_and_lists() -> None:
    assert STRAIGHT.leds == tuple(range(54)) and STRAIGHT.last_space == 53
    assert REVERSED.leds[0] == 53 and REVERSED.leds[53] == 0
    split = LedLayout.parse("0-14, 29-15", 40, 29)
    assert split.leds[:3] == (0, 1, 2) and split.leds[15:18] == (29, 28, 27)
    assert LedLayout.parse([5, 4, 3], 6, 2).leds == (5, 4, 3)
    assert LedLayout.parse("7", 8, 0).leds == (7,)


@pytest.mark.parametrize("spec, count, last, message", [
    ("0-52", 54, 53, r"'0-52' gives 53 LEDs but the board has 54 spaces \(0\.\.53\)"),
    ("0-54", 55, 53, "gives 55 LEDs"),
    ("0-53", 50, 53, r"LED 50 for space 50 is outside the strip \(0\.\.49\)"),
    ("0-10, 10-52", 60, 53, "LED 10 is given to both space 10 and space 11"),
    ("a-3", 60, 53, "bad LED range 'a-3' in 'a-3'"),
    ("0-3-5", 60, 53, "bad LED range '0-3-5'"),
    ("", 60, 53, "bad LED range ''"),
    ("-1-52", 60, 53, "bad LED range '-1-52'"),
    ([0, 1, 1], 5, 2, "LED 1 is given to both space 1 and space 2"),
    ([0, 1, True], 5, 2, "LED for space 2 must be a whole number, not True"),
    ("0-2", 0, 2, "LED count must be a whole number >= 1, not 0"),
])
def test_layout_errors_name_the_bad_value(spec, count, last, message) -> None:
    with pytest.raises(ValueError, match=message):
        LedLayout.parse(spec, count, last)


# --- colours at their spaces -----------------------------------------------

def test_tokens_at_their_leds_straight_and_reversed() -> None:
    """Inactive tokens are steady at full colour; everything else is off."""
    still = lights()
    frame = led_frame(still, 0.3, STRAIGHT)
    assert len(frame) == 54 and frame[3] == G_RGB and frame[10] == Y_RGB
    assert [i for i, rgb in enumerate(frame) if rgb != OFF] == [3, 10]
    back = led_frame(still, 0.3, REVERSED)
    assert back[50] == G_RGB and back[43] == Y_RGB
    assert [i for i, rgb in enumerate(back) if rgb != OFF] == [43, 50]


def test_unmapped_leds_stay_off() -> None:
    """A 60-LED strip with the board on LEDs 6..59: LEDs 0..5 stay off."""
    layout = LedLayout.parse("6-59", 60, 53)
    frame = led_frame(lights(leather=frozenset({0})), 0.0, layout)
    assert frame[:6] == [OFF] * 6 and frame[6] == LEATHER_RGB and frame[9] == G_RGB


def test_dim_leather_income_and_white_targets() -> None:
    frame = led_frame(lights(leather=frozenset({20, 26}), income=frozenset({5, 11}),
                             targets=frozenset({16})), 0.0, STRAIGHT)
    assert frame[20] == frame[26] == LEATHER_RGB == (40, 14, 0)
    assert frame[5] == frame[11] == INCOME_RGB == (0, 6, 40)
    assert frame[16] == WHITE == (170, 170, 170)
    assert frame[0] == OFF


def test_target_on_a_token_shows_white() -> None:
    frame = led_frame(lights(targets=frozenset({10})), 0.0, STRAIGHT)
    assert frame[10] == WHITE and frame[3] == G_RGB


# --- animation -------------------------------------------------------------

def test_active_token_pulses_within_bounds() -> None:
    """Green active: every 2 s it dims to 25% (at 0.375 s) and is back at 100% by
    0.75 s, then rests at 100%; never outside 25%..100%."""
    active = lights(active=GREEN)
    assert led_frame(active, 0.0, STRAIGHT)[3] == (0, 200, 0)
    assert led_frame(active, 0.375, STRAIGHT)[3] == (0, 50, 0)
    assert led_frame(active, 6.1875, STRAIGHT)[3] == (0, 125, 0)
    assert led_frame(active, 7.25, STRAIGHT)[3] == led_frame(active, 1.9, STRAIGHT)[3] == G_RGB
    greens = [led_frame(active, t / 50, STRAIGHT)[3][1] for t in range(100)]
    assert min(greens) == 50 and max(greens) == 200 and len(set(greens)) > 20
    assert set(greens[38:]) == {200}                           # resting from 0.75 s
    assert led_frame(active, 0.375, STRAIGHT)[10] == Y_RGB    # yellow steady
    assert pulse(0.375) == pytest.approx(0.25) and pulse(0.0) == pulse(1.5) == pytest.approx(1.0)


def test_expected_and_wrong_blink_in_anti_phase_at_2_hz() -> None:
    """Expected white in the first quarter-second of each half-second, wrong
    red in the second; the off phase shows what lies below (leather, off)."""
    mix = lights(expected=frozenset({12}), wrong=frozenset({15}),
                 leather=frozenset({12}))
    first, second = led_frame(mix, 0.1, STRAIGHT), led_frame(mix, 0.3, STRAIGHT)
    assert (first[12], first[15]) == (WHITE, OFF)
    assert (second[12], second[15]) == (LEATHER_RGB, RED) and RED == (220, 0, 0)
    again = led_frame(mix, 10.6, STRAIGHT)
    assert (again[12], again[15]) == (WHITE, OFF)


def test_expected_on_the_token_space_alternates_white_and_token() -> None:
    frame_on = led_frame(lights(expected=frozenset({3})), 0.1, STRAIGHT)
    frame_off = led_frame(lights(expected=frozenset({3})), 0.4, STRAIGHT)
    assert frame_on[3] == WHITE and frame_off[3] == G_RGB


def test_both_tokens_on_one_space_alternate_each_second() -> None:
    """The active one (yellow) in even seconds, pulsing; green in odd ones."""
    shared = Lights(last_space=29, tokens=((YELLOW, 8), (GREEN, 8)), active=YELLOW)
    layout = LedLayout.parse("29-0", 30, 29)
    assert led_frame(shared, 1.5, layout)[21] == G_RGB
    assert led_frame(shared, 0.0, layout)[21] == Y_RGB                  # pulse at rest
    assert led_frame(shared, 2.375, layout)[21] == (58, 40, 0)          # pulse 25%
    assert [i for i, rgb in enumerate(led_frame(shared, 1.5, layout)) if rgb != OFF] == [21]
    other = Lights(last_space=29, tokens=((YELLOW, 8), (GREEN, 8)), active=GREEN)
    assert led_frame(other, 0.0, layout)[21] == G_RGB and led_frame(other, 1.1, layout)[21] == Y_RGB


def test_celebrate_chases_the_winners_colour() -> None:
    """Heads every 6 spaces moving 12 spaces a second, a 3-space fading tail."""
    party = lights(celebrate=YELLOW, tokens=((GREEN, 53), (YELLOW, 53)))
    at0 = led_frame(party, 0.0, STRAIGHT)
    assert at0[0] == at0[6] == at0[48] == Y_RGB
    assert at0[5] == (153, 107, 0) and at0[4] == (77, 53, 0)          # tail of head 6
    assert at0[1] == at0[2] == at0[3] == OFF
    later = led_frame(party, 1 / 12, STRAIGHT)                         # heads moved by 1
    assert later[1] == later[7] == Y_RGB
    assert later[0] == (153, 107, 0)                                    # 2/3 tail
    assert led_frame(party, 0.0, STRAIGHT) != led_frame(party, 0.04, STRAIGHT)


# --- when to redraw --------------------------------------------------------

def test_next_change() -> None:
    assert next_change(lights(), 3.0) is None
    assert next_change(lights(leather=frozenset({20}), targets=frozenset({9})), 3.0) is None
    assert next_change(lights(active=GREEN), 3.0) == pytest.approx(3.0 + FRAME_INTERVAL)
    assert next_change(lights(active=GREEN, tokens=((YELLOW, 1),)), 3.0) is None
    assert next_change(lights(wrong=frozenset({4})), 3.1) == pytest.approx(3.25)
    assert next_change(lights(expected=frozenset({4})), 3.25) == pytest.approx(3.5)
    shared = lights(tokens=((GREEN, 8), (YELLOW, 8)))
    assert next_change(shared, 4.2) == pytest.approx(5.0)
    assert next_change(lights(celebrate=GREEN), 1.0) == pytest.approx(1.0 + FRAME_INTERVAL)


def test_static_frame_is_constant_over_time() -> None:
    """When next_change says None the frame really does not change."""
    still = lights(leather=frozenset({20}), income=frozenset({5}), targets=frozenset({9}))
    frames = {tuple(led_frame(still, t / 7, STRAIGHT)) for t in range(50)}
    assert len(frames) == 1


# --- errors ----------------------------------------------------------------

@pytest.mark.parametrize("bad, message", [
    (Lights(last_space=29), r"lights are for spaces 0\.\.29 but the LED layout maps 0\.\.53"),
    (lights(tokens=(("red", 3),)), "unknown token colour 'red'"),
    (lights(tokens=((GREEN, 54),)), r"space 54 is not on the board \(0\.\.53\)"),
    (lights(tokens=((GREEN, 1), (GREEN, 2))), "token 'green' is listed twice"),
    (lights(targets=frozenset({-1})), r"space -1 is not on the board"),
    (lights(celebrate="blue"), "unknown token colour 'blue'"),
])
def test_frame_errors(bad: Lights, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        led_frame(bad, 0.0, STRAIGHT)
