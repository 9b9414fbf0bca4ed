"""JSON text from outside (a record, a journal line) read without surprises.

``json.loads`` recurses once per nested list or object: thousands of levels
raise ``RecursionError`` (not a ``ValueError``), and a value nested a few
hundred levels deep still breaks later code that walks or prints it. This
module turns both into a plain :class:`ValueError` saying what is wrong, so
every caller handles hostile nesting like any other malformed input.
Standard library only, no I/O.
"""
from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting of lists/objects accepted (a game record needs 4: the
record, its moves, a move, its cells)."""


class NestingError(ValueError):
    """JSON (or TOML) nested deeper than :data:`MAX_DEPTH` levels."""


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply ``value`` nests lists/tuples/dicts (a scalar is 0, ``[]`` is 1).

    Walks iteratively, so any depth is measured without recursion; stops and
    returns ``limit + 1`` as soon as the nesting passes ``limit``.
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if level > limit:
            return limit + 1
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children
                     if isinstance(child, (dict, list, tuple)))
    return deepest


def check_depth(value: Any, what: str = "JSON", limit: int = MAX_DEPTH) -> Any:
    """Return ``value`` unchanged, or raise :class:`NestingError` when it nests
    more than ``limit`` levels; ``what`` names the input in the message."""
    if depth_of(value, limit) > limit:
        raise NestingError(f"{what} is nested more than {limit} levels deep")
    return value


def loads(text: str | bytes, what: str = "JSON", limit: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` that raises only ValueError subclasses.

    Returns the decoded value. Raises ``json.JSONDecodeError`` for bad JSON
    (with its position, as ``json.loads`` does), :class:`NestingError` for
    lists/objects nested more than ``limit`` levels (however deep: the
    decoder's ``RecursionError`` is caught), and ValueError for bytes that are
    not UTF-8.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestingError(f"{what} is nested more than {limit} levels deep") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} is not UTF-8 text: {exc}") from None
    return check_depth(value, what, limit)
