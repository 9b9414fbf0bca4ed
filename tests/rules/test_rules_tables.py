"""The per-spec lookup tables agree with the catalogue and the time board they come from."""
from __future__ import annotations

import pytest

from firmware_py.rules import load_spec
from firmware_py.rules.tables import placement_masks, spec_tables

SPECS = [("patchwork", "2014"), ("patchwork", "revised"), ("patchwork-express", None)]


@pytest.mark.parametrize("game,board", SPECS)
def test_income_crossings_are_the_spaces_after_start_up_to_end(game, board):
    spec = load_spec(game, board)
    crossed = spec_tables(spec).crossed
    last = spec.last_space
    for start in range(last + 1):
        for end in range(start, last + 1):
            want = tuple(s for s in spec.income_spaces if start < s <= end)
            assert crossed[start][end] == want, (start, end)
    assert crossed[0][last] == spec.income_spaces        # the whole board pays every space once


@pytest.mark.parametrize("game,board", SPECS)
def test_patch_rows_match_the_catalogue(game, board):
    spec = load_spec(game, board)
    tables = spec_tables(spec)
    for p in spec.patches:
        assert tables.patch[p.id] == (p.cost, p.time, p.income, p.area)
        assert (tables.cost[p.id], tables.area[p.id]) == (p.cost, p.area)
        assert tables.buy[p.id].patch == p.id and tables.buy[p.id].mask is None


def test_tables_are_built_once_per_spec():
    spec = load_spec("patchwork")
    assert spec_tables(spec) is spec_tables(spec)
    assert len(placement_masks(spec, 0)) == 144
