"""Button gestures: debounce, press, hold (pure, with a fake clock)."""
from __future__ import annotations

import pytest

from firmware_py.companion.buttons import HOLD, PRESS, ButtonClassifier, Gesture


def test_short_press_fires_on_release():
    c = ButtonClassifier(hold_s=1.0, debounce_s=0.02)
    assert c.edge("ok", True, 10.0) == []
    assert c.tick(10.5) == []
    assert c.edge("ok", False, 10.6) == [Gesture("ok", PRESS)]


def test_hold_fires_once_while_held_and_release_adds_nothing():
    c = ButtonClassifier(hold_s=1.0, debounce_s=0.02)
    c.edge("back", True, 0.0)
    assert c.next_deadline() == pytest.approx(1.0)
    assert c.tick(0.99) == []
    assert c.tick(1.0) == [Gesture("back", HOLD)]
    assert c.tick(3.0) == []
    assert c.edge("back", False, 3.1) == []


def test_late_tick_still_gives_hold_not_press():
    c = ButtonClassifier(hold_s=1.0, debounce_s=0.02)
    c.edge("ok", True, 0.0)
    assert c.edge("ok", False, 1.5) == [Gesture("ok", HOLD)]


@pytest.mark.parametrize("offsets", [(0.001, 0.002, 0.003), (0.0005, 0.004), (0.001, 0.002, 0.0035, 0.0049)])
def test_chatter_on_press_and_release_is_one_press(offsets):
    c = ButtonClassifier(hold_s=1.0, debounce_s=0.005)
    out, level = [], True
    out += c.edge("next", True, 5.0)
    for dt in offsets:                        # bounces within 5 ms of the press
        level = not level
        out += c.edge("next", level, 5.0 + dt)
    if not level:                             # make sure the finger is still down
        out += c.edge("next", True, 5.0 + offsets[-1] + 0.0001)
    out += c.tick(5.01)
    out += c.edge("next", False, 5.3)         # release, with chatter
    out += c.edge("next", True, 5.301)
    out += c.edge("next", False, 5.302)
    out += c.tick(5.4)
    assert out == [Gesture("next", PRESS)]


def test_glitch_shorter_than_debounce_settles_to_release():
    c = ButtonClassifier(hold_s=1.0, debounce_s=0.005)
    c.edge("ok", True, 1.0)
    c.edge("ok", False, 1.001)                # a 1 ms spike: ignored at first
    assert c.tick(1.01) == [Gesture("ok", PRESS)]   # the level is re-read after the window
    assert c.tick(3.0) == []                  # and no hold follows


def test_bad_settings_rejected():
    with pytest.raises(ValueError):
        ButtonClassifier(hold_s=0, debounce_s=0.01)
    with pytest.raises(ValueError):
        ButtonClassifier(hold_s=1, debounce_s=0.5)
