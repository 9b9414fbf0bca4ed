"""The box as an opponent: Monte Carlo tree search over the engine's fast path.

>>> from firmware_py.rules import new_game
>>> from firmware_py.ai import choose
>>> decision = choose(new_game(seed=1), level="easy", iterations=50)
"""
from .box import LEVELS, Decision, Level, choose

__all__ = ["LEVELS", "Decision", "Level", "choose"]
