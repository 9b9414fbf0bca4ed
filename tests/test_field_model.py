"""hardware/field_model.py: the magnet field model behind the build docs' magnet,
stack-up and spacing, and the docs' figures held to its output."""
from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
import sys
from pathlib import Path

import pytest
from PIL import Image

REPO = Path(__file__).resolve().parent.parent
HARDWARE = REPO / "hardware"


def _load():
    spec = importlib.util.spec_from_file_location("field_model", HARDWARE / "field_model.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["field_model"] = module
    spec.loader.exec_module(module)
    return module


fm = _load()


@pytest.fixture(scope="module")
def results():
    return fm.evaluate_all()


def on_axis(br: float, diameter: float, height: float, gap: float) -> float:
    """The textbook on-axis field of an axially magnetised cylinder, mT (lengths mm, br T)."""
    r = diameter / 2
    far, near = gap + height, gap
    return 1000 * br / 2 * (far / math.hypot(far, r) - near / math.hypot(near, r))


@pytest.mark.parametrize("magnet", sorted(fm.MAGNETS))
@pytest.mark.parametrize("gap", [2.8, 5.0, 7.8])
def test_the_model_matches_the_on_axis_formula(magnet, gap):
    """Guards the geometry: distances from the magnet's face, the element under it."""
    diameter, height = fm.MAGNETS[magnet]
    assert fm.bz(magnet, 1.2, gap, [0.0])[0] == pytest.approx(on_axis(1.2, diameter, height, gap),
                                                              rel=1e-6)


def test_off_axis_a_flat_sensor_sees_less_than_the_total_field():
    """The old docs' 5x2 mm N35 at 3 mm: about 7 mT in total 8 mm off the axis, but only
    4.7 mT vertical at 5 mm, right at the worst-case operate point; negative at 8 mm."""
    assert fm.bz("5x2", 1.2, 3.0, [5.0])[0] == pytest.approx(4.67, abs=0.01)
    assert fm.bz("5x2", 1.2, 3.0, [8.0])[0] < -1.5


def test_the_recommendation_follows_from_the_numbers(results):
    best = fm.recommend(results)
    assert (best.magnet, best.grade) == ("6x3", "N35")
    assert best.ok and best.capture >= fm.PUSH_MM + fm.SENSOR_PLACEMENT_MM
    good = [r for r in results if r.ok]
    assert all(round(r.spacing, 1) >= round(best.spacing, 1) for r in good)
    # the small 5x2 disc never captures a token pushed 5 mm off the centre
    assert not any(r.ok for r in results if r.magnet == "5x2")


def test_a_stack_with_opposite_poles_is_weaker_than_the_same_pole(results):
    for r in results:
        assert r.stack_opposite < r.axis < r.stack_same


def test_limits_change_the_figures():
    strict = fm.evaluate("6x3", "N35", "3 mm top, under 4 mm plate", bop=6.0)
    loose = fm.evaluate("6x3", "N35", "3 mm top, under 4 mm plate", bop=4.0)
    assert strict.capture < loose.capture
    with pytest.raises(ValueError, match="no magnet"):
        fm.recommend([dataclasses.replace(strict, ok=False)])


def _block(text: str) -> str:
    match = re.search(r"<!-- field-model: begin.*?-->\n(.*?)<!-- field-model: end -->", text, re.S)
    assert match, "no field-model block"
    return match.group(1)


def test_the_docs_carry_the_scripts_tables(results):
    """mechanical.md's tables are the script's output, character for character."""
    assert _block((HARDWARE / "mechanical.md").read_text()) == fm.markdown(results)


def test_the_docs_name_the_recommended_magnet_and_spacing(results):
    best = fm.recommend(results)
    bom = (HARDWARE / "bom.md").read_text()
    mechanical = (HARDWARE / "mechanical.md").read_text()
    diameter, height = fm.MAGNETS[best.magnet]
    assert f"{diameter:g} mm x {height:g} mm, {best.grade}" in bom
    for doc in (bom, mechanical):
        assert f"{best.spacing:.1f} mm" in doc
        assert f"{best.capture:.1f} mm" in doc
    top, plate = fm.STACKUPS[best.stackup]
    assert f"{top + plate:g} mm" in mechanical and f"{best.gap:.1f} mm" in mechanical


def test_the_png_is_drawn(tmp_path, results):
    out = tmp_path / "field.png"
    fm.draw(str(out), results)
    with Image.open(out) as image:
        assert image.format == "PNG" and image.size[0] > 600
    assert (HARDWARE / "field-model.png").is_file()


def test_the_command_line(capsys):
    assert fm.main([]) == 0
    assert "recommended: 6x3 N35" in capsys.readouterr().out
    for bad in (["--brp", "5", "--bop", "4"], ["--neighbour", "3"], ["--token-height", "-1"]):
        with pytest.raises(SystemExit):
            fm.main(bad)
        assert "must be" in capsys.readouterr().err


def test_the_template_warns_at_the_models_spacing(results):
    from firmware_py import template
    assert template.SPACING_MM == round(fm.recommend(results).spacing, 1)


def test_crosstalk_at_the_neighbour_follows_the_spacing(results):
    """A neighbour closer than the spacing sees more than the release point; the old
    build (5 x 2 mm disc, sensor flush under 2 mm) keeps a neighbour 20 mm away on."""
    for r in results:
        stays_on = max(r.crosstalk, r.stack_crosstalk) >= fm.BRP_MIN_MT
        assert stays_on == (r.spacing > r.neighbour + fm.STEP_MM), r
    old = fm.evaluate("5x2", "N35", "2 mm top, pocket")
    assert old.crosstalk > fm.BRP_MIN_MT and not old.ok
    best = fm.recommend(results)
    assert max(best.crosstalk, best.stack_crosstalk) < fm.BRP_MIN_MT
