"""Simulated boxes for trying a club broker before the evening (and for tests).

``patchwork-companion club simulate --boxes N --rate R`` runs N boxes in one
process; each is a real :class:`.bridge.ClubBridge` with its own on-disk
outbox, playing random legal games with the rules engine at R moves a second
and publishing them exactly as a box at a table does. Table names are
``<prefix>-01`` ... ; games restart when they end.
"""
from __future__ import annotations

import random
import time
import uuid
from pathlib import Path

from ..rules import GameRecord, action_to_move, apply, legal_actions, new_game
from .bridge import ClubBridge, ClubSettings
from .progress import Offer


class SimGame:
    """A random untracked Patchwork game played one move at a time from ``seed``."""

    def __init__(self, seed: int, names: tuple[str, str]):
        self.rng = random.Random(seed)
        self.state = new_game("patchwork", "2014", seed=seed, tracked=False)
        self.circle, self.blue = self.state.circle, self.state.blue
        self.names = names
        self.moves: list = []
        self.game_id = uuid.UUID(int=self.rng.getrandbits(128)).hex[:16]

    def step(self) -> bool:
        """Play one random legal move; False once the game is over."""
        if self.state.over:
            return False
        action = self.rng.choice(legal_actions(self.state))
        self.state, _ = apply(self.state, action)
        move = action_to_move(self.state.spec, action)
        if move is not None:
            self.moves.append(move)
        return True

    def offer(self, ts: float | None = None) -> Offer:
        """The game as it stands, as a box offers it to its bridge."""
        record = GameRecord("patchwork", "2014", self.names, self.circle, tuple(self.moves),
                            None, None, {"app": "patchwork-companion club simulate"})
        return Offer(self.game_id, record, time.time() if ts is None else ts)


def run_boxes(settings: ClubSettings, count: int, rate: float, folder: str | Path,
              seconds: float | None = None, prefix: str = "sim", seed: int = 1) -> int:
    """Run ``count`` simulated boxes at ``rate`` moves/s each for ``seconds``
    (None: until interrupted). Outboxes go to ``folder``. Returns moves played."""
    folder = Path(folder)
    boxes = []
    for i in range(count):
        table = f"{prefix}-{i + 1:02d}"
        box_settings = ClubSettings(**{**settings.__dict__, "table": table})
        bridge = ClubBridge(box_settings, folder / f"{table}.sqlite").start()
        boxes.append([bridge, SimGame(seed * 1000 + i, (f"{table}-a", f"{table}-b"))])
    played, start = 0, time.monotonic()
    period = 1.0 / rate
    tick = start
    try:
        while seconds is None or time.monotonic() - start < seconds:
            for box in boxes:
                if not box[1].step():
                    box[1] = SimGame(box[1].rng.getrandbits(32), box[1].names)
                box[0].offer(box[1].offer())
                played += 1
            tick += period
            time.sleep(max(0.0, tick - time.monotonic()))
    except KeyboardInterrupt:
        pass
    finally:
        for bridge, _ in boxes:
            bridge.stop()
    return played
