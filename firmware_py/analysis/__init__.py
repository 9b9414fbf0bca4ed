"""Post-game review: what each decision of a saved game cost, by the box's searcher.

Floor 4 (design.md section 3): reads saved records (``store``), evaluates them
with ``ai`` over the engine's fast path (``rules``); run by a command or by the
web process's worker, never by the game service.

>>> from firmware_py.analysis import analyse
>>> result = analyse(record)          # doctest: +SKIP
"""
from .review import VERSION, Settings, analyse, costliest

__all__ = ["VERSION", "Settings", "analyse", "costliest"]
