"""The replay tells the game: each move in words (who, the patch, what was paid and
earned, income crossed, leather won), taken leather patches leave the board, quilts
where the record knows them (tracked cells, the box's placements), and the keyboard's
arrows step through it in the browser."""
from __future__ import annotations

from conftest import GOLDEN, needs
from firmware_py.rules import parse_record, untracked_copy
from firmware_py.web.library import replay_frames


def test_each_move_is_told_from_its_events():
    record = untracked_copy(parse_record(GOLDEN[0]))
    frames = replay_frames(record)
    assert len(frames) == len(record.moves) + 1
    texts = [f["text"] for f in frames[1:]]
    buys = [t for t, m in zip(texts, record.moves) if isinstance(m, dict) and "buy" in m]
    assert all(f"buys patch {m['buy']} (price " in t and ": pays " in t
               for t, m in zip(buys, [m for m in record.moves if isinstance(m, dict) and "buy" in m]))
    assert any("crosses income: takes" in t for t in texts)
    won = [t for t in texts if "wins the leather patch on" in t]
    assert won
    for frame, move in zip(frames[1:], record.moves):
        name = record.players[frame["who"]]
        assert frame["text"].split(": ", 1)[1].startswith(name)
        assert frame["patch"] == (move.get("buy") if isinstance(move, dict) else None)


def test_taken_leather_patches_leave_the_board():
    record = parse_record(GOLDEN[0])
    frames = replay_frames(record)
    leather = [f["leather"] for f in frames]
    assert leather[0] == sorted(record.spec().leather_spaces)
    assert leather[-1] == [] or len(leather[-1]) < len(leather[0])
    assert all(set(b) <= set(a) for a, b in zip(leather, leather[1:]))   # never come back
    for frame in frames[1:]:
        if "wins the leather patch on" in frame["text"]:
            space = int(frame["text"].rsplit("wins the leather patch on ", 1)[1].split(";")[0])
            assert space not in frame["leather"]


def test_quilts_where_known():
    tracked = parse_record(GOLDEN[0])
    last = replay_frames(tracked)[-1]
    for quilt, player in zip(last["quilts"], last["players"]):
        assert len(quilt["covered"]) == quilt["count"] == 81 - player["empty"]
    untracked = untracked_copy(tracked)
    assert all(q["covered"] is None for q in replay_frames(untracked)[-1]["quilts"])


def test_the_box_quilt_from_meta_grows_move_by_move():
    from dataclasses import replace
    tracked = parse_record(GOLDEN[0])
    placements = [{"move": i, "buy": m["buy"], "cells": m["cells"]}
                  for i, m in enumerate(tracked.moves) if isinstance(m, dict) and "buy" in m]
    meta = {"box_quilt": {"player": 1, "level": "hard", "placements": placements[1::2],
                          "quilt": []}}
    record = replace(untracked_copy(tracked), meta=meta)
    frames = replay_frames(record)
    counts = [len(f["quilts"][1]["covered"]) for f in frames]
    assert counts[0] == 0 and counts[-1] > 0 and counts == sorted(counts)
    assert frames[-1]["quilts"][0]["covered"] is None          # the person's: only counted


@needs("chromium")
def test_arrow_keys_step_the_replay(tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from firmware_py.web.library import Library
    from firmware_py.web.server import make_app
    from web_helpers import ServerThread, fill_store, open_browser, screenshot
    filed = fill_store(tmp_path / "store", 2)
    with ServerThread(make_app(tmp_path, Library(tmp_path / "store"), tmp_path / "n.json")) \
            as server, open_browser() as driver:
        driver.get(f"{server.url}/game/{filed[0][0]}")
        body = driver.find_element(By.TAG_NAME, "body")
        for _ in range(3):
            body.send_keys(Keys.ARROW_RIGHT)
        assert driver.find_element(By.ID, "step").text.startswith("3 / ")
        assert driver.find_element(By.ID, "move").text.startswith("move 3: ")
        body.send_keys(Keys.ARROW_LEFT)
        assert driver.find_element(By.ID, "step").text.startswith("2 / ")
        body.send_keys(Keys.END)
        step = driver.find_element(By.ID, "step").text.split(" / ")
        assert step[0] == step[1]
        hidden = [m for m in driver.find_elements(By.CSS_SELECTOR, "#replay-board .leather")
                  if not m.is_displayed()]
        assert hidden                                   # leather taken during the game
        screenshot(driver, "replay-end-keyboard")
