"""One vocabulary and honest charts: the same start time, length and result (winner's
score first) in ``history``, on the page and in the BG Stats file; chart axes through
zero, single games drawn, per-player colours that never look like the tokens'."""
from __future__ import annotations

import colorsys
import re
from dataclasses import replace

from conftest import GOLDEN
from firmware_py.rules import parse_record
from firmware_py.store import History
from firmware_py.store.export import to_bgstats
from firmware_py.store.history import row_text
from firmware_py.store.wording import duration_text, minutes, result_text, when_text
from firmware_py.web import pages, svg
from firmware_py.web.library import Library

STARTED, ENDED = "2026-12-01T19:04:00+01:00", "2026-12-01T19:08:31+01:00"


def _store(tmp_path, seconds=271):
    record = parse_record(GOLDEN[0])
    meta = {"started": STARTED, "ended": ENDED, "duration_s": seconds}
    History(tmp_path).file("20261201-190400-abcdef",
                           replace(record, players=("Ann", "Bob"), result=None, meta=meta))
    return Library(tmp_path)


def test_minutes_round_to_the_nearest_and_say_so_alike():
    assert [minutes(s) for s in (0, 29, 30, 89, 90, 271, None)] == [0, 0, 1, 1, 2, 5, None]
    assert duration_text(271) == "5 min" and duration_text(None) == ""
    assert when_text(STARTED, ENDED) == "2026-12-01 19:04"
    assert when_text(None, ENDED) == "2026-12-01 19:08"


def test_the_winner_and_the_winners_score_come_first():
    assert result_text(("Ann", "Bob"), (12, 31), 1) == "Bob wins 31 to 12"
    assert result_text(("Ann", "Bob"), (12, 31), None).endswith("(not finished)")


def test_history_the_page_and_bg_stats_say_the_same_time_and_length(tmp_path):
    library = _store(tmp_path)
    with library.history.index() as index:
        row = index.db.execute("SELECT * FROM game_rows").fetchone()
        line = row_text(dict(row))
        play = to_bgstats(index)["plays"][0]
    rows, _ = library.games(None, None, 10, 0)
    page = pages.history_page(rows, 1, {}, [], 1, 50)
    assert "2026-12-01 19:04" in line and "2026-12-01 19:04" in page   # the start, everywhere
    assert "19:08" not in line
    assert " 5 min" in line and ">5 min<" in page and play["durationMin"] == 5
    winner = next(p for p in rows[0]["players"] if p["winner"])
    loser = next(p for p in rows[0]["players"] if not p["winner"])
    said = f"{winner['name']} wins {winner['score']} to {loser['score']}"
    assert said in page
    assert f"{winner['name']} {winner['score']} : {loser['name']} {loser['score']}" in line


def _rects(chart: str) -> list[tuple[float, float]]:
    return [(float(y), float(h)) for y, h in
            re.findall(r'<rect x="[\d.]+" y="([\d.-]+)" width="[\d.]+" height="([\d.]+)" fill=',
                       chart)]


def _zero(chart: str) -> float:
    return float(re.search(r'y1="([\d.]+)" y2="[\d.]+" class="zero"', chart).group(1))


def test_negative_scores_draw_bars_below_the_zero_axis():
    chart = svg.bar_chart("Average and best score", ["Ann", "Bob"],
                          [("average", [-12.5, 20.0], "#555"), ("best", [-3, 31], "#b03a2e")])
    bars, zero = _rects(chart)[:4], _zero(chart)          # Ann's two bars, then Bob's
    assert all(h > 1 for _, h in bars)
    assert abs(bars[0][0] - zero) < 0.2                   # Ann's average hangs from zero
    assert abs(bars[2][0] + bars[2][1] - zero) < 0.2      # Bob's average stands on it
    assert ">0<" in chart                                 # zero is labelled


def test_a_player_with_one_game_gets_a_dot():
    chart = svg.line_chart("Scores", [("Ann", [-7], "#3b6fd8"), ("Bob", [3, 9, -2], "#8e44ad")])
    assert chart.count("<circle") == 4
    assert "Ann, game 1: -7" in chart


def _hue(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, _, s = colorsys.rgb_to_hls(r, g, b)
    return h * 360 if s > 0.15 else -1.0


def test_player_colours_never_look_like_a_token_and_yellow_is_yellow():
    token_hues = [_hue(c) for c in pages.COLOURS.values()]
    for i in range(12):
        hue = _hue(pages.player_colour(f"player {i}", i))
        assert hue < 0 or all(min(abs(hue - t), 360 - abs(hue - t)) > 40 for t in token_hues), i
    assert pages.player_colour("Yellow", 0) == pages.COLOURS["yellow"]
    assert pages.player_colour("green", 3) == pages.COLOURS["green"]


def test_no_page_hides_anything_with_an_inline_style_its_csp_would_block(tmp_path):
    library = _store(tmp_path)
    rows, total = library.games(None, None, 10, 0)
    row, record = library.game(rows[0]["id"])
    html = [pages.live_page(), pages.history_page(rows, total, {}, [], 1, 50),
            pages.game_page(row, library.replay_steps(record)), pages.stats_page(library.stats()),
            pages.downloads_page(total), pages.players_page([], False)]
    for page in html:
        assert not re.search(r'\sstyle="', page), re.search(r'.{60}\sstyle=".{40}', page)
        assert "<style" not in page and "http://" not in page.replace("http://www.w3.org", "")
    assert 'id="waiting"' in html[0] and 'id="oled" class="oled" alt="the OLED screen" hidden' \
        in html[0]
