"""The OLED's corner badge: a short cause in the players' words, never a Python
exception, and never at the cost of a title (the renderer's checks cover it)."""
from __future__ import annotations

import pytest

from firmware_py.companion.badges import badge, short_cause
from firmware_py.companion.model import PlayerLine, Screen
from firmware_py.view.oled import _paint, page_count, problems

PLAYERS = (PlayerLine("Anna", "green", 53, 31, 12, 4, False, 23),
           PlayerLine("Bob", "yellow", 50, 20, 9, 9, False, 2))


@pytest.mark.parametrize("text, short", [
    ("sensor offline: device lost (SerialException: device reports readiness to read but "
     "returned no data)", "sensor unplugged"),
    ("sensor offline: no device (/dev/serial/by-id/usb-pico)", "sensor unplugged"),
    ("sensor offline: reader error (OSError: [Errno 5] Input/output error)", "sensor unplugged"),
    ("sensor offline: silent for 2 s", "sensor silent"),
    ("sensor port in use: /dev/ttyACM0 is open in another program", "sensor port busy"),
    ("LED strip failed: RuntimeError", "LED strip failed"),
    ("OLED failed: OSError", "OLED failed"),
    ("OLED failed to start", "OLED failed to start"),
    ("record not saved: No space left on device", "record not saved: No space left on device"),
    ("not saving: disk full (/var/lib/pwc/journal)", "not saving: disk full (/var/lib/pwc/journal)"),
    ("journal: 3 bad lines skipped; resumed at turn 15",
     "journal: 3 bad lines skipped; resumed at turn 15"),
    ("PIN 4821", "PIN 4821"),
    ("something odd: ValueError", "something odd"),
    ("history index failed (OperationalError: disk I/O error)", "history index failed"),
    ("KeyError in the loop", "see log"),
])
def test_a_warning_says_its_cause_in_a_few_words(text, short):
    assert short_cause(text) == short
    assert "Exception" not in short_cause(text) and "Error" not in short_cause(text)


def test_several_warnings_each_once():
    assert badge(["sensor offline: no device (x)", "sensor offline: device lost (OSError: x)",
                  "OLED failed: OSError"]) == "sensor unplugged / OLED failed"


def _titles(screen: Screen) -> list[str]:
    """The title bar's text on each page (the first text drawn at the bar's left)."""
    out = []
    for page in range(page_count(screen)):
        boxes = _paint(screen, page)[1].boxes
        out.append(" | ".join(b[4] for b in boxes if b[1] < 10))
    return out


def test_a_long_title_is_never_cut_by_the_badge():
    screen = Screen("end", title="Game ended early", players=PLAYERS,
                    lines=("Scores as they stand.",), warning="sensor unplugged",
                    footer="OK:new game")
    assert problems(screen) == []
    shown = _titles(screen)
    assert "Game ended early" in shown                     # whole, on a page of its own
    assert any("SENSOR UNPLUGGED" in t.upper() for t in shown)  # and the badge in turn


def test_the_badge_joins_the_overlap_check():
    screen = Screen("end", title="Anna wins", players=PLAYERS, warning="sensor unplugged",
                    footer="OK:new game")
    canvas = _paint(screen, 0)[1]
    assert any(b[4].upper() == "SENSOR UNPLUGGED" for b in canvas.boxes)
    assert problems(screen) == []


def test_the_table_shows_the_short_cause_of_a_sensor_exception():
    from firmware_py.companion.screens import build_screen
    from table_helpers import TableRig
    from firmware_py.rules import deal, load_spec
    ui = TableRig(lambda _body: None, lambda game: deal(load_spec(game), 1), lambda _s: "x.json")
    ui.sensor_status(False, "sensor offline: device lost (SerialException: device reports "
                            "readiness to read but returned no data)")
    screen = build_screen(ui.view(), ui.warnings.values())
    assert screen.warning == "sensor unplugged"
    assert problems(screen) == []
