"""The build docs in hardware/: every link resolves, and the wiring diagram keeps
the two LED data lines apart."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HARDWARE = REPO / "hardware"
DOCS = sorted(HARDWARE.rglob("*.md")) + [REPO / "README.md"]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SVG = "{http://www.w3.org/2000/svg}"


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    return {slug(m) for m in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.M)}


def links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def test_slugs_follow_github():
    assert slug("Test one space before you buy 60") == "test-one-space-before-you-buy-60"
    assert slug("The LED strip: three routes, pick one") == "the-led-strip-three-routes-pick-one"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(doc):
    found = links(doc)
    if doc.parent == HARDWARE or doc.name == "README.md" and doc.parent == REPO:
        assert found, f"{doc} has no links at all: the link check would prove nothing"
    broken = []
    for target in found:
        if re.match(r"[a-z]+:", target):
            continue                       # web links are not checked offline
        if doc == REPO / "README.md" and not target.startswith("hardware"):
            continue                       # the top README: only its links into hardware/
        path, _, fragment = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.name}")
    assert not broken, f"{doc.relative_to(REPO)}: " + "; ".join(broken)


def test_the_link_check_finds_a_dead_link(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n[x](missing.md) and [y](#title) and [z](#nope)\n")
    targets = links(doc)
    assert targets == ["missing.md", "#title", "#nope"]
    assert "title" in anchors(doc) and "nope" not in anchors(doc)


# ------------------------------------------------------------ wiring.svg
def _points(d: str) -> list[tuple[float, float]]:
    """The vertices of an SVG path made of absolute M, H, V and L commands."""
    points: list[tuple[float, float]] = []
    x = y = 0.0
    for cmd, args in re.findall(r"([MHVL])\s*([-\d.,\s]+)", d):
        nums = [float(n) for n in re.split(r"[,\s]+", args.strip()) if n]
        if cmd in "ML":
            x, y = nums[0], nums[1]
        elif cmd == "H":
            x = nums[0]
        else:
            y = nums[0]
        points.append((x, y))
    return points


def _touches(a: list, b: list) -> bool:
    """True when two axis-parallel polylines share any point."""
    def on(p, s, e):
        return (min(s[0], e[0]) <= p[0] <= max(s[0], e[0])
                and min(s[1], e[1]) <= p[1] <= max(s[1], e[1]))
    segs_a, segs_b = list(zip(a, a[1:])), list(zip(b, b[1:]))
    for s1, e1 in segs_a:
        for s2, e2 in segs_b:
            if any(on(p, s2, e2) for p in (s1, e1)) or any(on(p, s1, e1) for p in (s2, e2)):
                return True
            if s1[0] == e1[0] and s2[1] == e2[1] and on((s1[0], s2[1]), s1, e1) and on((s1[0], s2[1]), s2, e2):
                return True
            if s1[1] == e1[1] and s2[0] == e2[0] and on((s2[0], s1[1]), s1, e1) and on((s2[0], s1[1]), s2, e2):
                return True
    return False


def test_wiring_svg_keeps_gpio_18_and_gpio_10_apart():
    root = ET.parse(HARDWARE / "wiring.svg").getroot()
    texts = [(t.get("y"), "".join(t.itertext())) for t in root.iter(f"{SVG}text")]
    y18 = next(float(y) for y, s in texts if "GPIO 18" in s and "pin 12" in s) - 4
    y10 = next(float(y) for y, s in texts if "GPIO 10" in s and "pin 19" in s) - 4
    paths = [_points(p.get("d")) for p in root.iter(f"{SVG}path")
             if p.get("class") in ("sig", "alt") and re.fullmatch(r"[MHVL\d.,\s-]+", p.get("d"))]
    line18 = next(p for p in paths if p[0] == (305.0, y18))
    line10 = next(p for p in paths if p[0] == (305.0, y10))
    assert not _touches(line18, line10), "GPIO 18 and GPIO 10 are drawn joined"
    dots = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{SVG}circle")
            if c.get("class") == "dot"]
    assert not any(_touches(line18, [d, d]) and _touches(line10, [d, d]) for d in dots)


def test_the_svg_check_sees_joined_lines():
    joined18 = _points("M305,312 H520 V372 H600")
    joined10 = _points("M305,352 H500 V372 H520")
    assert _touches(joined18, joined10)
    assert not _touches(_points("M305,312 H466"), _points("M305,352 H466"))
