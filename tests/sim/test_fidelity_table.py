"""The randomized table: 1,000 seeded games played by simulated people (firmware_py.sim.people).

People decide a legal move, then carry it out in a random style (choose with NEXT
and OK then move, move first and answer, browse then move, slides with pauses on
other spaces, lift and set down, a knocked token put back, undo and redo, the
next player moving quickly), and leave 15% of the questions about their own move
unanswered while the game goes on (the other player's turn or their own next one),
seeing only the OLED screen model and the LEDs. After every game the saved record
must equal the moves they made, and questions about several moves were asked.
"""
from __future__ import annotations

import pytest

from firmware_py.sim.people import play_game

GAMES = 1000


@pytest.mark.slow
def test_randomized_table_records_exactly_what_was_played(tmp_path):
    wrong = []
    moves = left = several = 0
    for seed in range(GAMES):
        outcome = play_game(seed, tmp_path / f"g{seed}")
        moves += outcome.moves
        left += outcome.left_open
        several += outcome.several
        if not outcome.exact:
            wrong.append(f"seed {seed}: {outcome.problem}")
    assert not wrong, f"{len(wrong)}/{GAMES} games recorded wrong:\n" + "\n".join(wrong[:10])
    assert moves > 30 * GAMES                   # whole games were played
    assert left > GAMES and several > GAMES // 20   # the habit was tried, and asked about
