"""A whole game against the box at the simulated table: the real adapters (gpiozero mock
pins, the simulated sensor on a pty, luma, the NeoPixel strip), the box's search on its
own thread, and a simulated person who carries out the box's turns from its screen."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from firmware_py.ai.table import planner
from firmware_py.service.assembly import start_companion
from firmware_py.sim.demo import demo_config
from firmware_py.rules import deal, load_spec, parse_record, placement_masks, replay
from firmware_py.rules.quilt import has_square
from firmware_py.sim.box_game import BoxGamePlayer
from firmware_py.sim.hands import Hands

pytestmark = pytest.mark.slow


def _cells(spec, cells) -> int:
    mask = 0
    for row, col in cells:
        mask |= 1 << (row * spec.cols + col)
    return mask


@pytest.mark.parametrize("person_first", [True, False])
def test_a_whole_game_against_the_box(tmp_path, person_first):
    cfg = demo_config(fast=True)
    companion = start_companion(cfg, folder=tmp_path, deal=lambda g: deal(load_spec(g), 11),
                                planner=planner(iterations=40))
    try:
        hands = Hands(companion, timeout=20)
        player = BoxGamePlayer(hands, "normal", random.Random(3), person_first=person_first)
        player.set_up()
        game = player.play()
        saved = companion.service.status.saved_to
    finally:
        companion.close()
    assert game.problems == []
    assert game.box >= 10 and game.person >= 10
    record = parse_record(Path(saved).read_text())
    spec = load_spec(record.game, record.time_board)
    box = record.meta["box_quilt"]
    seat = 1 if person_first else 0
    assert record.players[seat] == "Box" and box["player"] == seat and box["level"] == "normal"
    assert all("cells" not in m for m in record.moves if isinstance(m, dict))   # untracked
    # the box's placements: each an orientation of its patch, on empty squares, at the
    # index of the box's buy in the record; together the quilt the person built
    quilt = 0
    for placement in box["placements"]:
        move = record.moves[placement["move"]]
        if "buy" in placement:
            mask = _cells(spec, placement["cells"])
            assert move == {"buy": placement["buy"]}
            assert mask in placement_masks(spec, placement["buy"])
        else:
            mask = _cells(spec, [placement["leather"]])
        assert not mask & quilt
        quilt |= mask
    assert quilt == game.quilt
    rows = ["".join("#" if quilt >> (r * spec.cols + c) & 1 else "." for c in range(spec.cols))
            for r in range(spec.rows)]
    assert box["quilt"] == rows
    bonus = {"bonus": seat} in record.moves
    assert bonus == (has_square(quilt, spec.bonus_square, spec.rows, spec.cols)
                     and {"bonus": 1 - seat} not in record.moves)
    _, result = replay(record)
    assert result.over and record.result == {"scores": list(result.scores),
                                             "winner": result.winner}
