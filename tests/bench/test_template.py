"""``patchwork-companion template``: 54 numbered marks at the measured centres, 1:1 in mm."""
from __future__ import annotations

import math
import random
import xml.etree.ElementTree as ET

import pytest

from firmware_py import cli
from firmware_py.bench import template, template_pages

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


# ------------------------------------------------------------------ pages at 1:1


def grid(count=54, pitch=34.0, start=17.0, columns=8):
    """A measured-looking board of about 270 mm: rows of spaces ``pitch`` apart."""
    return [(start + (i % columns) * pitch, start + (i // columns) * pitch) for i in range(count)]


def page_window(root):
    rect = next(r for r in root.iter(f"{SVG}rect") if r.get("class") == "window")
    return tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))


def aligns(root):
    return {(float(c.get("cx")), float(c.get("cy"))) for g in root.iter(f"{SVG}g")
            if g.get("class") == "align" for c in g.iter(f"{SVG}circle")}


def bar_length(root, cls):
    d = next(p for p in root.iter(f"{SVG}path") if p.get("class") == cls).get("d")
    numbers = [float(n) for n in d.replace("M", " ").replace("H", " ").replace("V", " ").split()]
    return numbers[2] - (numbers[0] if cls == "scale-x" else numbers[1])


@pytest.mark.parametrize("paper, size", [("a4", (210.0, 297.0)), ("letter", (215.9, 279.4))])
def test_a_270_mm_board_tiles_over_pages_at_1_to_1(tmp_path, capsys, paper, size):
    path = centres_file(tmp_path, grid(), size=270.0)
    out = tmp_path / "t.svg"
    assert cli.main(["template", "--centres", str(path), "--out", str(out), "--paper", paper]) == 0
    files = sorted(tmp_path.glob(f"t-{paper}-*.svg"), key=lambda p: int(p.stem.split("-")[-1]))
    assert len(files) == 4                          # 290 mm with the margin: 2 x 2 pages
    assert f"wrote 4 {'A4' if paper == 'a4' else 'Letter'} pages" in capsys.readouterr().out
    roots = [ET.fromstring(f.read_text()) for f in files]
    windows = [page_window(r) for r in roots]
    for root, (wx, wy, ww, wh) in zip(roots, windows):
        # each page is the paper's printable area, in mm, with the view box in board mm
        width, height = (float(root.get(k)[:-2]) for k in ("width", "height"))
        assert root.get("width").endswith("mm") and width <= size[0] - 20 and height <= size[1] - 20
        vx, vy, vw, vh = map(float, root.get("viewBox").split())
        assert (vw, vh) == (width, height) and vx <= wx and wx + ww <= vx + vw
        assert vy <= wy and wy + wh <= vy + vh
        assert bar_length(root, "scale-x") == pytest.approx(100)
        assert bar_length(root, "scale-y") == pytest.approx(100)
        legend = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") == "legend")
        assert "8 x 8 mm" in legend and "5 x 4 mm" in legend and "6 mm" in legend
    # together the windows cover the whole sheet (board plus margin) ...
    for x in range(-10, 281, 5):
        for y in range(-10, 281, 5):
            assert any(wx <= x <= wx + ww and wy <= y <= wy + wh for wx, wy, ww, wh in windows)
    # ... neighbours overlap by 15 mm and share at least two alignment marks in the overlap
    (a, b), (c, d) = (windows[0], windows[1]), (windows[0], windows[2])
    assert a[0] + a[2] - b[0] == pytest.approx(15.0) and c[1] + c[3] - d[1] == pytest.approx(15.0)
    for i, j in ((0, 1), (2, 3), (0, 2), (1, 3)):
        shared = aligns(roots[i]) & aligns(roots[j])
        assert len(shared) >= 2, (i, j)
        for x, y in shared:
            assert all(w[0] <= x <= w[0] + w[2] and w[1] <= y <= w[1] + w[3]
                       for w in (windows[i], windows[j]))
    # every space's centre is whole on at least one page, at its board coordinates
    for space, (x, y) in enumerate(grid()):
        assert any(wx + 4 <= x <= wx + ww - 4 and wy + 4 <= y <= wy + wh - 4
                   and marks(ET.tostring(r, encoding="unicode"))[1][space][:2] == (x, y)
                   for r, (wx, wy, ww, wh) in zip(roots, windows))


def test_marks_carry_the_sensor_and_led_pockets_with_their_sizes(tmp_path):
    board = template.load_centres(centres_file(tmp_path, grid(), size=270.0))
    root = ET.fromstring(template.render_svg(board))
    for group in (g for g in root.iter(f"{SVG}g") if g.get("class") == "mark"):
        x, y = (float(group.find(f"{SVG}circle").get(k)) for k in ("cx", "cy"))
        rects = {r.get("class"): r for r in group.iter(f"{SVG}rect")}
        assert (float(rects["sensor"].get("width")), float(rects["to92"].get("width"))) == (8, 5)
        led = next(c for c in group.iter(f"{SVG}circle") if c.get("class") == "led")
        assert float(led.get("r")) == 3
        assert math.hypot(float(led.get("cx")) - x, float(led.get("cy")) - y) == pytest.approx(10)


def test_centres_closer_than_the_magnets_spacing_are_named(tmp_path):
    close = grid(pitch=16.0)
    lines = []
    path = centres_file(tmp_path, close, size=270.0)
    assert template.main(str(path), str(tmp_path / "t.svg"), paper="none", say=lines.append) == 0
    assert "warning: spaces 0 and 1 are 16 mm apart, less than the 18.6 mm" in "\n".join(lines)
    assert not list(tmp_path.glob("t-*.svg"))
    lines.clear()
    assert template.main(str(centres_file(tmp_path, grid(), size=270.0)), str(tmp_path / "u.svg"),
                         paper="letter", say=lines.append) == 0
    assert not any(line.startswith("warning") for line in lines)


def test_an_unknown_paper_is_refused(tmp_path, capsys):
    assert template.main(None, str(tmp_path / "t.svg"), paper="a3") == 2
    assert "paper must be one of a4, letter" in capsys.readouterr().err


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_alignment_marks_keep_clear_of_the_space_marks(tmp_path, paper):
    """A circled cross on a sensor square or an LED hole could be punched or matched
    by mistake: every alignment mark keeps clear of every centre and LED hole."""
    board = template.load_centres(centres_file(tmp_path, grid(), size=270.0))
    clear = template_pages.ALIGN_CLEARANCE_MM
    spots = [(x, y) for x, y in board.centres]
    spots += [(x + sx * template.LED_OFFSET_MM, y + sy * template.LED_OFFSET_MM)
              for x, y in board.centres for sx, sy in [template.led_side(board, x, y)]]
    roots = [ET.fromstring(svg) for svg in template.pages(board, paper)]
    found = set().union(*(aligns(r) for r in roots))
    assert found
    for ax, ay in found:
        assert min(math.hypot(ax - x, ay - y) for x, y in spots) >= clear, (ax, ay)
