"""``patchwork-companion template``: 54 numbered marks at the measured centres, 1:1 in mm."""
from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest

from firmware_py import cli, template

SVG = "{http://www.w3.org/2000/svg}"


def centres_file(tmp_path, centres, game="patchwork", approximate=False, size=300.0, extra=""):
    pairs = ", ".join(f"[{x!r}, {y!r}]" for x, y in centres)
    path = tmp_path / "centres.toml"
    path.write_text(f'game = "{game}"\napproximate = {str(approximate).lower()}\n'
                    f"width_mm = {size}\nheight_mm = {size}\n{extra}centres = [{pairs}]\n")
    return path


def measured(count=54, seed=7):
    """Irregular centres, as a maker measures them (not a grid), at least 8 mm apart."""
    rng = random.Random(seed)
    out: list[tuple[float, float]] = []
    while len(out) < count:
        x, y = round(rng.uniform(5, 295), 1), round(rng.uniform(5, 295), 1)
        if all((x - a) ** 2 + (y - b) ** 2 >= 64 for a, b in out):
            out.append((x, y))
    return out


def marks(svg: str):
    root = ET.fromstring(svg)
    found = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") == "mark":
            circle = group.find(f"{SVG}circle")
            label = group.find(f"{SVG}text")
            found[int(group.get("data-space"))] = (float(circle.get("cx")), float(circle.get("cy")),
                                                   label.text)
    return root, found


def test_54_numbered_marks_at_the_given_centres_at_1_to_1(tmp_path):
    given = measured()
    out = tmp_path / "t.svg"
    assert cli.main(["template", "--centres", str(centres_file(tmp_path, given)), "--out", str(out)]) == 0
    root, found = marks(out.read_text())
    assert sorted(found) == list(range(54))
    for space, (x, y) in enumerate(given):
        assert found[space] == (pytest.approx(x), pytest.approx(y), str(space))
    # 1:1: the page is as many millimetres wide/high as the view box has user units
    x0, y0, vw, vh = map(float, root.get("viewBox").split())
    assert root.get("width") == f"{vw:g}mm" and root.get("height") == f"{vh:g}mm"
    assert x0 < 0 and y0 < 0 and vw > 300 and vh > 300       # the board fits with a margin
    scale = next(p for p in root.iter(f"{SVG}path") if p.get("class") == "scale")
    assert scale.get("d").endswith("H100")                    # the 100 mm check bar
    assert not any(t.get("class") == "approximate" for t in root.iter(f"{SVG}text"))


def test_the_shipped_default_is_labelled_approximate_on_the_print(tmp_path, capsys):
    assert template.main(None, None) == 0
    svg = capsys.readouterr().out
    root, found = marks(svg)
    assert len(found) == 54
    warning = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "approximate"]
    assert warning and "APPROXIMATE" in warning[0]
    assert template.load_centres().approximate


def test_express_has_30_marks(tmp_path):
    path = centres_file(tmp_path, measured(30), game="patchwork-express")
    _, found = marks(template.render_svg(template.load_centres(path)))
    assert sorted(found) == list(range(30))


@pytest.mark.parametrize("change, message", [
    (lambda c: c[:53], "needs centres for 54 spaces (0..53), got 53"),
    (lambda c: c[:10] + [(400.0, 10.0)] + c[11:], "space 10 at (400, 10) mm lies outside"),
    (lambda c: c[:3] + [(c[2][0] + 1, c[2][1])] + c[4:], "spaces 2 and 3 are 1.0 mm apart"),
    (lambda c: c[:5] + [("12", 4.0)] + c[6:], "centres[5] x must be a number"),
])
def test_bad_centres_files_are_named_and_refused(tmp_path, capsys, change, message):
    path = centres_file(tmp_path, change(measured()))
    out = tmp_path / "t.svg"
    assert cli.main(["template", "--centres", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err and not out.exists()


def test_unreadable_or_invalid_files(tmp_path, capsys):
    assert template.main(str(tmp_path / "none.toml"), None) == 2
    assert "cannot read the centres file" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("game = [\n")
    assert template.main(str(bad), None) == 2
    assert "is not valid TOML" in capsys.readouterr().err
    bad.write_text('game = "chess"\nwidth_mm = 1\nheight_mm = 1\ncentres = []\n')
    assert template.main(str(bad), None) == 2
    assert "game must be one of" in capsys.readouterr().err
