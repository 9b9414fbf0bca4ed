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

REPO = Path(__file__).resolve().parents[2]
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
    from firmware_py.bench import template
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


def test_the_built_space_drawing_is_the_models_stack_up(results):
    """built-space.svg (12 px per mm): the magnet's size, the magnet glued under the token
    (its bottom face on the top layer, the token on top of it, as the model's stack
    assumes), the layers' thicknesses and the gap to the hall element are the model's."""
    import xml.etree.ElementTree as ET

    best = fm.recommend(results)
    top, plate = fm.STACKUPS[best.stackup]
    diameter, height = fm.MAGNETS[best.magnet]
    root = ET.parse(HARDWARE / "built-space.svg").getroot()
    ns = "{http://www.w3.org/2000/svg}"
    rects = [r for r in root.iter(f"{ns}rect")]

    def box(fill):
        r = next(r for r in rects if r.get("fill") == fill)
        return (float(r.get("x")), float(r.get("y")), float(r.get("width")),
                float(r.get("height")))

    px = 12.0
    token, magnet, acrylic = box("url(#token)"), box("url(#steel)"), box("url(#acrylic)")
    assert (magnet[2], magnet[3]) == (diameter * px, height * px)
    assert magnet[1] + magnet[3] == pytest.approx(acrylic[1])          # on the top layer
    assert token[1] + token[3] == pytest.approx(magnet[1])             # the token on the magnet
    assert token[3] == pytest.approx(fm.TOKEN_HEIGHT_MM * px)
    assert acrylic[3] == pytest.approx(top * px)
    dimension = next(p for p in root.iter(f"{ns}path") if p.get("d", "").startswith("M76.0,"))
    _, y0, y1 = (float(v) for v in re.findall(r"[\d.]+", dimension.get("d")))
    assert (y1 - y0) == pytest.approx(fm.gap_of(best.stackup) * px, abs=0.5)
    assert y0 == pytest.approx(acrylic[1])
    plate_path = next(p for p in root.iter(f"{ns}path") if p.get("fill") == "url(#ply)")
    ys = [float(v) for v in re.findall(r"V([\d.]+)", plate_path.get("d"))]
    assert ys and ys[0] - float(re.match(r"M[\d.]+,([\d.]+)", plate_path.get("d")).group(1)) \
        == pytest.approx(plate * px)


def test_the_docs_give_the_thickness_the_figures_hold_for(results, monkeypatch):
    """mechanical.md says for which total thickness the figures hold (nominal +- the
    model's tolerance, on the whole distance) and what a stack 1 mm too thin needs."""
    text = " ".join((HARDWARE / "mechanical.md").read_text().split())
    best = fm.recommend(results)
    top, plate = fm.STACKUPS[best.stackup]
    low, high = top + plate - fm.TOLERANCE_MM, top + plate + fm.TOLERANCE_MM
    assert f"the figures hold for {low:g} to {high:g} mm of material together" in text
    assert "0.5 mm error on the whole magnet-to-sensor distance (not on each layer)" in text
    monkeypatch.setattr(fm, "TOLERANCE_MM", 1.0)
    thin = fm.evaluate(best.magnet, best.grade, best.stackup)
    assert thin.spacing > best.spacing + 2
    assert f"a stack 1 mm too thin already needs {thin.spacing:.1f} mm between centres" in text


def test_your_own_layers_are_computed(capsys):
    """bom.md's one-space test says to rerun the model for the layers you build:
    --layers TOP PLATE adds that stack-up to the tables."""
    assert fm.main(["--layers", "3", "4.5"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "3 mm top, under 4.5 mm plate" in line]
    assert len(rows) == len(fm.MAGNETS) * len(fm.GRADES)
    assert "gap  8.3" in rows[0]
    thicker = fm.evaluate("6x3", "N35", "mine", layers=(3.0, 4.5))
    base = fm.evaluate("6x3", "N35", "3 mm top, under 4 mm plate")
    assert thicker.axis < base.axis and thicker.gap == pytest.approx(base.gap + 0.5)
    with pytest.raises(SystemExit):
        fm.main(["--layers", "3", "-1"])
    assert "--layers must be" in capsys.readouterr().err
    bom = " ".join((HARDWARE / "bom.md").read_text().split())
    assert "python hardware/field_model.py --layers" in bom
