"""Quilt boards as integer bitmasks, and every placement of a patch.

Square (row, col) of a ``rows`` x ``cols`` quilt is bit ``row * cols + col``;
a quilt is the int whose set bits are the covered squares. A placement is the
mask of the squares a patch covers in one of its up to 8 orientations (rotation
and mirror image, ruling R1) at one offset fully inside the quilt.
"""
from __future__ import annotations

from functools import lru_cache

Cells = tuple[tuple[int, int], ...]


def normalise(cells) -> Cells:
    """Shift cells so the smallest row and column are 0; return them sorted."""
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


def orientations(cells) -> tuple[Cells, ...]:
    """The distinct orientations (rotations and mirror images) of a shape, R1.

    ``cells`` is an iterable of (row, col); returns 1 to 8 normalised shapes.
    """
    found: list[Cells] = []
    shape = list(cells)
    for _mirror in range(2):
        for _turn in range(4):
            shape = [(c, -r) for r, c in shape]
            norm = normalise(shape)
            if norm not in found:
                found.append(norm)
        shape = [(r, -c) for r, c in shape]
    return tuple(found)


def mask_of(cells, cols: int) -> int:
    """Bitmask of (row, col) cells on a quilt ``cols`` wide (no range check)."""
    mask = 0
    for r, c in cells:
        mask |= 1 << (r * cols + c)
    return mask


def cells_of(mask: int, cols: int) -> list[tuple[int, int]]:
    """The (row, col) cells of a mask, in bit order (row-major)."""
    out = []
    while mask:
        low = mask & -mask
        bit = low.bit_length() - 1
        out.append(divmod(bit, cols))
        mask ^= low
    return out


@lru_cache(maxsize=None)
def placements(cells: Cells, rows: int, cols: int) -> tuple[int, ...]:
    """Every distinct placement mask of a shape on an empty ``rows`` x ``cols`` quilt.

    Golden counts: the 1x2 patch has 144 placements on 9x9 (R1).
    """
    masks: list[int] = []
    seen: set[int] = set()
    for shape in orientations(cells):
        height = max(r for r, _ in shape) + 1
        width = max(c for _, c in shape) + 1
        base = mask_of(shape, cols)
        for dr in range(rows - height + 1):
            for dc in range(cols - width + 1):
                mask = base << (dr * cols + dc)
                if mask not in seen:
                    seen.add(mask)
                    masks.append(mask)
    return tuple(masks)


@lru_cache(maxsize=None)
def square_masks(side: int, rows: int, cols: int) -> tuple[int, ...]:
    """Masks of every ``side`` x ``side`` square on the quilt (9 for 7x7 on 9x9)."""
    if side <= 0 or side > rows or side > cols:
        return ()
    block = mask_of([(r, c) for r in range(side) for c in range(side)], cols)
    return tuple(block << (r * cols + c)
                 for r in range(rows - side + 1) for c in range(cols - side + 1))


def has_square(quilt: int, side: int, rows: int, cols: int) -> bool:
    """True when some ``side`` x ``side`` square of the quilt is fully covered (R11)."""
    return any(quilt & sq == sq for sq in square_masks(side, rows, cols))


def popcount(mask: int) -> int:
    """Number of set bits (covered squares)."""
    return mask.bit_count()
