"""Where a patch goes: fast placement heuristics on quilt bitmasks.

Squares are bits ``row * cols + col`` as in :mod:`firmware_py.rules.quilt`.
Search decides *which* patch to take; these functions decide *where* it goes,
so a turn has at most four choices instead of over a thousand.
"""
from __future__ import annotations

from functools import lru_cache

from ..rules.tables import buy_table


@lru_cache(maxsize=None)
def _edges(rows: int, cols: int) -> tuple[int, int, int, int, int]:
    """(full, left column, right column, top row, bottom row) masks of a quilt."""
    full = (1 << rows * cols) - 1
    left = sum(1 << r * cols for r in range(rows))
    right = left << cols - 1
    top = (1 << cols) - 1
    bottom = top << (rows - 1) * cols
    return full, left, right, top, bottom


def walls(quilt: int, rows: int, cols: int) -> tuple[int, int, int, int]:
    """Per side, the squares whose neighbour on that side is covered or off the quilt.

    Returns masks (left, right, up, down); a placement touching ``k`` such
    sides has contact ``k`` (see :func:`contact`).
    """
    full, left, right, top, bottom = _edges(rows, cols)
    return (left | (quilt & ~right) << 1,
            right | (quilt & ~left) >> 1,
            top | (quilt << cols) & full,
            bottom | quilt >> cols)


def contact(mask: int, w: tuple[int, int, int, int]) -> int:
    """Edges of placement ``mask`` that touch a covered square or the quilt border (0..4 x area)."""
    return ((mask & w[0]).bit_count() + (mask & w[1]).bit_count()
            + (mask & w[2]).bit_count() + (mask & w[3]).bit_count())


def holes(quilt: int, rows: int, cols: int) -> int:
    """Empty squares with all four sides covered or off the quilt (only a 1x1 leather patch fills them)."""
    full = _edges(rows, cols)[0]
    w = walls(quilt, rows, cols)
    return (~quilt & full & w[0] & w[1] & w[2] & w[3]).bit_count()


def contact_placement(spec, pid: int, quilt: int) -> int | None:
    """The placement of patch ``pid`` whose edges touch the most covered squares or
    quilt border; the first such in the engine's placement order; None if none fits."""
    w = walls(quilt, spec.rows, spec.cols)
    best, best_mask = -1, None
    for mask, _ in buy_table(spec)[pid]:
        if not mask & quilt:
            c = contact(mask, w)
            if c > best:
                best, best_mask = c, mask
    return best_mask


def box_placement(spec, pid: int, quilt: int) -> int | None:
    """The box's own placement: most contact, minus 3 per new hole no patch but a
    leather one can fill, plus squares inside the best 7x7 window (R11) while the
    quilt is young. None when the patch does not fit anywhere."""
    rows, cols = spec.rows, spec.cols
    w = walls(quilt, rows, cols)
    full = _edges(rows, cols)[0]
    window = _window(spec, quilt)
    best, best_mask = None, None
    for mask, _ in buy_table(spec)[pid]:
        if mask & quilt:
            continue
        value = 2 * contact(mask, w) + (mask & window).bit_count()
        after = quilt | mask
        wa = walls(after, rows, cols)
        value -= 6 * (~after & full & wa[0] & wa[1] & wa[2] & wa[3]).bit_count()
        if best is None or value > best:
            best, best_mask = value, mask
    return best_mask


def _window(spec, quilt: int) -> int:
    """The special tile's square (R11) that already holds most covered squares; 0 without one."""
    from ..rules.quilt import square_masks
    squares = square_masks(spec.bonus_square, spec.rows, spec.cols)
    if not squares:
        return 0
    return max(squares, key=lambda sq: (sq & quilt).bit_count())


def leather_square(spec, quilt: int) -> int | None:
    """Square (bit index) for a 1x1 leather patch: fill a hole first, else the most
    contact; None on a full quilt."""
    rows, cols = spec.rows, spec.cols
    full = _edges(rows, cols)[0]
    free = ~quilt & full
    if not free:
        return None
    w = walls(quilt, rows, cols)
    window = _window(spec, quilt)
    best, best_sq = -1, None
    square = 0
    while free:
        low = free & -free
        value = 4 * contact(low, w) + (1 if low & window else 0)
        if value > best:
            best, best_sq = value, low.bit_length() - 1
        free ^= low
        square += 1
    return best_sq
