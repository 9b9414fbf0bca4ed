"""The build docs in hardware/: every link resolves, and the wiring diagram keeps
the two LED data lines apart."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
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


# ------------------------------------------------------------------ one source of truth for pins

import tomllib  # noqa: E402

#: The Raspberry Pi 40-pin header: BCM number -> physical pin (the pins the build uses).
PI_HEADER = {2: 3, 3: 5, 5: 29, 6: 31, 10: 19, 13: 33, 18: 12}
#: The Pico's pins: GPIO number -> physical pin (GP2..GP9), and its 3V3(OUT) and GND pins.
PICO_PINS = {2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 8: 11, 9: 12}
PICO_3V3_OUT, PICO_GND = 36, {3, 8, 13, 18, 23, 28, 33, 38}
CONFIG = tomllib.loads((REPO / "firmware_py" / "default-config.toml").read_text())
BUTTONS = {"NEXT": CONFIG["buttons"]["next"], "OK": CONFIG["buttons"]["ok"],
           "BACK": CONFIG["buttons"]["back"]}


def firmware_pins(code: str) -> dict[str, list[int]]:
    """The Pico GPIOs of SELECT_PINS (S0..S3) and COMMON_PINS (SIG of mux 0..3) in code.py."""
    found = {}
    for name in ("SELECT_PINS", "COMMON_PINS"):
        line = re.search(rf"^{name} = \((.*?)\)", code, re.M).group(1)
        found[name] = [int(n) for n in re.findall(r"board\.GP(\d+)", line)]
    return found


FIRMWARE = firmware_pins((HARDWARE / "sensor-firmware" / "code.py").read_text())
#: What each Pico GPIO carries, from the firmware's constants.
PICO_SIGNALS = {**{gp: f"S{k}" for k, gp in enumerate(FIRMWARE["SELECT_PINS"])},
                **{gp: f"SIG mux {k}" for k, gp in enumerate(FIRMWARE["COMMON_PINS"])}}


def pi_table_faults(md: str) -> list[str]:
    """wiring.md's Pi pin table against the header and the default config."""
    faults, rows = [], 0
    for func, bcm, header, config in re.findall(
            r"^\| ([^|]+?) \| (\d+)(?: \([^)]*\))? \| (\d+) \|[^|]*\|[^|]*\| ([^|]*)\|$", md, re.M):
        rows += 1
        if PI_HEADER.get(int(bcm)) != int(header):
            faults.append(f"{func}: BCM {bcm} is header pin {PI_HEADER.get(int(bcm))}, table says {header}")
        for key, value in re.findall(r"\[buttons\] (\w+) = (\d+)", config):
            if int(value) != int(bcm) or CONFIG["buttons"][key] != int(bcm):
                faults.append(f"{func}: config {key} = {CONFIG['buttons'][key]}, table BCM {bcm}")
    return faults if rows >= 8 else faults + [f"only {rows} pin rows found"]


def pi_svg_faults(svg_text: str) -> list[str]:
    """wiring.svg's header labels ("pin 29 GPIO 5 · NEXT") against the header and the config."""
    root = ET.fromstring(svg_text)
    faults, labels = [], 0
    for text in root.iter(f"{SVG}text"):
        m = re.fullmatch(r"pin (\d+)\s*GPIO (\d+) · (.+)", "".join(text.itertext()).strip())
        if not m:
            continue
        labels += 1
        header, bcm, what = int(m.group(1)), int(m.group(2)), m.group(3)
        if PI_HEADER.get(bcm) != header:
            faults.append(f"GPIO {bcm} drawn as pin {header}")
        if what in BUTTONS and BUTTONS[what] != bcm:
            faults.append(f"{what} drawn on GPIO {bcm}, config says {BUTTONS[what]}")
    return faults if labels >= 7 else faults + [f"only {labels} header labels found"]


def pico_table_faults(md: str) -> list[str]:
    """The sensor-side tables (wiring.md: "| 4, 5, 6, 7 | GP2, GP3, GP4, GP5 | S0, ... |";
    sensor-firmware/README.md: "| GP2 | S0 | ... |") against the firmware and the Pico."""
    faults, seen = [], set()
    for phys, gps, what in re.findall(r"^\| ([\d, ]+) \| (GP[\dGP, ]+) \| ([^|]+)\|", md, re.M):
        gps_n = [int(g) for g in re.findall(r"GP(\d+)", gps)]
        phys_n = [int(p) for p in re.findall(r"\d+", phys)]
        for gp, ph in zip(gps_n, phys_n):
            seen.add(gp)
            if PICO_PINS.get(gp) != ph:
                faults.append(f"GP{gp} is Pico pin {PICO_PINS.get(gp)}, table says {ph}")
        names = re.findall(r"S\d|multiplexer (\d)|SIG", what)
        if "S0" in what and [PICO_SIGNALS.get(g) for g in gps_n] != [f"S{k}" for k in range(4)]:
            faults.append(f"{gps} carry {[PICO_SIGNALS.get(g) for g in gps_n]}, table says {what.strip()}")
        if "SIG" in what and [PICO_SIGNALS.get(g) for g in gps_n] != [f"SIG mux {k}" for k in range(4)]:
            faults.append(f"{gps} carry {[PICO_SIGNALS.get(g) for g in gps_n]}, table says {what.strip()}")
        del names
    for gp, signal in re.findall(r"^\| GP(\d+) \| (S\d|SIG mux \d) \|", md, re.M):
        seen.add(int(gp))
        if PICO_SIGNALS.get(int(gp)) != signal:
            faults.append(f"GP{gp} carries {PICO_SIGNALS.get(int(gp))}, table says {signal}")
    return faults if seen >= set(PICO_SIGNALS) else faults + [f"pins missing: {set(PICO_SIGNALS) - seen}"]


def pico_svg_faults(svg_text: str) -> list[str]:
    """wiring-sensor.svg's Pico labels (data-pico, data-phys, data-signal) against the firmware."""
    root = ET.fromstring(svg_text)
    faults, seen = [], set()
    for text in root.iter(f"{SVG}text"):
        pin = text.get("data-pico")
        if not pin:
            continue
        phys, signal = int(text.get("data-phys")), text.get("data-signal")
        shown = "".join(text.itertext())
        if f"pin {phys}" not in shown or pin not in shown:
            faults.append(f"label {shown!r} does not show pin {phys} {pin}")
        if pin == "3V3(OUT)":
            faults += [] if phys == PICO_3V3_OUT else [f"3V3(OUT) drawn as pin {phys}"]
        elif pin == "GND":
            faults += [] if phys in PICO_GND else [f"GND drawn as pin {phys}"]
        else:
            gp = int(pin[2:])
            seen.add(gp)
            if PICO_PINS.get(gp) != phys:
                faults.append(f"{pin} drawn as pin {phys}, it is {PICO_PINS.get(gp)}")
            if PICO_SIGNALS.get(gp) != signal:
                faults.append(f"{pin} drawn as {signal}, the firmware uses it for {PICO_SIGNALS.get(gp)}")
    return faults if seen == set(PICO_SIGNALS) else faults + [f"pins missing: {set(PICO_SIGNALS) - seen}"]


def test_the_firmware_uses_the_pins_the_docs_are_checked_against():
    assert FIRMWARE == {"SELECT_PINS": [2, 3, 4, 5], "COMMON_PINS": [6, 7, 8, 9]}
    assert BUTTONS == {"NEXT": 5, "OK": 6, "BACK": 13}
    assert CONFIG["leds"]["pin"] == "D18" and CONFIG["display"]["i2c_port"] == 1


def test_pi_pins_agree_across_table_diagram_and_config():
    assert pi_table_faults((HARDWARE / "wiring.md").read_text()) == []
    assert pi_svg_faults((HARDWARE / "wiring.svg").read_text()) == []
    readme = (HARDWARE / "README.md").read_text()
    assert f"BCM {BUTTONS['NEXT']}, {BUTTONS['OK']}, {BUTTONS['BACK']}" in readme


def test_pico_pins_agree_across_tables_diagram_and_firmware():
    assert pico_table_faults((HARDWARE / "wiring.md").read_text()) == []
    assert pico_table_faults((HARDWARE / "sensor-firmware" / "README.md").read_text()) == []
    assert pico_svg_faults((HARDWARE / "wiring-sensor.svg").read_text()) == []


def test_the_pin_checks_see_a_disagreement():
    md = (HARDWARE / "wiring.md").read_text()
    assert pi_table_faults(md.replace("| NEXT button (to GND) | 5 | 29 |",
                                      "| NEXT button (to GND) | 5 | 31 |"))
    svg = (HARDWARE / "wiring.svg").read_text()
    assert pi_svg_faults(svg.replace("GPIO 13 · BACK", "GPIO 19 · BACK"))
    assert pico_table_faults(md.replace("| 9, 10, 11, 12 | GP6, GP7, GP8, GP9 |",
                                        "| 9, 10, 11, 12 | GP7, GP6, GP8, GP9 |"))
    sensor = (HARDWARE / "wiring-sensor.svg").read_text()
    assert pico_svg_faults(sensor.replace('data-signal="S0"', 'data-signal="S1"'))
    readme = (HARDWARE / "sensor-firmware" / "README.md").read_text()
    assert pico_table_faults(readme.replace("| GP6 | SIG mux 0 |", "| GP6 | SIG mux 1 |"))


def test_the_wiring_svg_draws_the_pis_ground_to_the_strip():
    root = ET.parse(HARDWARE / "wiring.svg").getroot()
    path = next(p for p in root.iter(f"{SVG}path") if p.get("id") == "pi-gnd-to-strip")
    assert path.get("class") == "gnd"
    points = _points(path.get("d"))
    # from the OLED's GND line, which starts at the Pi's GND pin (y 262), to the strip's GND bus
    assert points[0] == (530.0, 262.0)
    gnd_bus = _points("M794,686 H930 V468 H956")
    assert _touches(points, gnd_bus)
    dots = {(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{SVG}circle")
            if c.get("class") == "dot"}
    assert {points[0], points[-1]} <= dots


# ------------------------------------------------------------------ the ordering list

def test_the_cost_estimate_adds_up_and_is_dated():
    bom = (HARDWARE / "bom.md").read_text()
    assert "Cost estimate, 2 December 2026" in bom and "estimate" in bom
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \| ([^|]+) \| ([\d.]+) \| ([\d.]+) \|$", bom, re.M)
    assert len(rows) >= 20
    for qty, part, mpn, each, total in rows:
        assert float(total) == pytest.approx(int(qty) * float(each), rel=0.1, abs=0.6), part
    stated = float(re.search(r"\*\*Total \(Zero 2 W build\)\*\* \| \| \| \*\*about (\d+)\*\*", bom).group(1))
    assert stated == round(sum(float(r[4]) for r in rows))
    assert "DRV5032FCDBZR" in bom and "SN74AHCT125N" in bom


# ------------------------------------------------------------ to92-pocket.svg
def _inside(point: tuple[float, float], polygon: list[tuple[float, float]]) -> bool:
    """Strictly inside a closed polygon (ray casting; points on an edge are outside)."""
    x, y = point
    for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1]):
        if (x1 == x2 and x == x1 and min(y1, y2) <= y <= max(y1, y2)) or \
                (y1 == y2 and y == y1 and min(x1, x2) <= x <= max(x1, x2)):
            return False
    crossings = 0
    for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1]):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            crossings += 1
    return crossings % 2 == 1


def test_the_to92_legs_run_in_a_groove_not_through_the_plate():
    """In the section the legs leave the body half-way up its thickness, so the plate
    needs a groove for them to lie straight: no point of a leg is inside the plate."""
    root = ET.parse(HARDWARE / "to92-pocket.svg").getroot()
    ns = "{http://www.w3.org/2000/svg}"
    plate = next(p for p in root.iter(f"{ns}path") if p.get("fill") == "url(#ply)")
    polygon = _points(plate.get("d"))
    body = next(r for r in root.iter(f"{ns}rect") if r.get("fill") == "url(#body)")
    right = float(body.get("x")) + float(body.get("width"))
    legs = [p for p in root.iter(f"{ns}path") if p.get("stroke") == "#999"]
    section = [_points(p.get("d")) for p in legs if _points(p.get("d"))[0][1] < 300]
    assert section
    for (x1, y), (x2, _) in (leg[:2] for leg in section):
        samples = [(x, y) for x in range(int(max(x1, right)) + 1, int(x2))]
        assert samples and not any(_inside(p, polygon) for p in samples)
    # the body in its pocket, the marked face against the pocket's ceiling
    top = float(body.get("y"))
    assert not _inside((right - 1, top + 1), polygon) and _inside((right - 1, top - 1), polygon)
