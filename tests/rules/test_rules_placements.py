"""Golden placement counts on an empty quilt (R1)."""
from __future__ import annotations

from firmware_py.rules import Buy, legal_actions, load_spec, new_game
from firmware_py.rules.quilt import orientations, placements


def test_one_by_two_has_144_placements_on_nine_by_nine():
    spec = load_spec("patchwork")
    assert spec.patches[0].shape == ("##",)
    assert len(placements(spec.patches[0].cells, 9, 9)) == 144


def test_all_patchwork_patches_7349():
    spec = load_spec("patchwork")
    assert sum(len(placements(p.cells, 9, 9)) for p in spec.patches) == 7349


def test_all_express_patches_2847():
    spec = load_spec("patchwork-express")
    assert sum(len(placements(p.cells, 7, 7)) for p in spec.patches) == 2847


def test_orientation_counts():
    assert len(orientations([(0, 0), (0, 1)])) == 2                    # domino
    assert len(orientations([(0, 0), (0, 1), (1, 0), (1, 1)])) == 1    # square
    assert len(orientations([(0, 0), (1, 0), (2, 0), (2, 1)])) == 8    # L


def test_legal_actions_enumerate_each_distinct_placement():
    spec = load_spec("patchwork")
    rest = [p for p in spec.circle_patches if p not in (3, 1, 2, 0)]
    state = new_game(circle=[3, 1, 2] + rest + [0])
    buys = [a for a in legal_actions(state) if isinstance(a, Buy)]
    expected = sum(len(placements(spec.patches[p].cells, 9, 9)) for p in (3, 1, 2))
    assert len(buys) == len(set(buys)) == expected
