"""The house: every module of firmware_py/ lives in a room, and rooms import only downward.

The floors (the README's "How the code is organised" draws them):

    rules | disk | logs (0) <- companion (1) <- view | hw | store | ai (2)
    <- service | config (3) <- analysis | web | club | bench | deploy | sim (4)
    <- commands (5) <- cli (6)

A room may import rooms on lower floors; on floors 0-2 it may not import its
neighbours on the same floor either. Checked on the import statements of every
module (``import`` and ``from``, relative or absolute, also inside functions),
parsed from source: nothing is written into the package.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "firmware_py"

FLOORS = (("rules", "disk", "logs"), ("companion",), ("view", "hw", "store", "ai"),
          ("service", "config"), ("analysis", "web", "club", "bench", "deploy", "sim"),
          ("commands",), ("cli",))
FLOOR = {room: level for level, rooms in enumerate(FLOORS) for room in rooms}
SEALED = 2
"""On floors up to this one, rooms do not import their neighbours."""


def room_of(relative: Path) -> str:
    """The room of a module path relative to the package: its folder, or its name at the top."""
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def rooms_imported(source: str, relative: Path) -> set[str]:
    """The rooms of firmware_py that a module (``source``, at ``relative`` inside the
    package) imports from, its own room left out. A relative import that climbs out of
    the package, or an import of the package itself, is reported as ``"firmware_py"``."""
    depth = len(relative.parts) - 1                 # folders below firmware_py
    own = room_of(relative)
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level <= depth:
                continue                            # inside its own room
            if node.level > depth + 1:
                found.add("firmware_py")
                continue
            names = [node.module] if node.module else [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = _absolute([node.module or ""], node.names)
        elif isinstance(node, ast.Import):
            names = _absolute([a.name for a in node.names], [])
        found |= {n.split(".")[0] for n in names if n} - {own}
    return found


def _absolute(modules: list[str], aliases) -> list[str]:
    """The rooms named by absolute imports of ``firmware_py.<room>...``."""
    out = []
    for module in modules:
        if module == "firmware_py":
            out += [a.name for a in aliases] or ["firmware_py"]
        elif module.startswith("firmware_py."):
            out.append(module.split(".", 2)[1])
    return out


def modules() -> list[Path]:
    """Every module of the package, relative to it."""
    return sorted(p.relative_to(PACKAGE) for p in PACKAGE.rglob("*.py"))


def test_every_module_lives_in_a_room_of_the_design():
    loose = [str(m) for m in modules() if room_of(m) not in FLOOR and m.name != "__init__.py"]
    assert loose == []


def test_only_the_cli_the_config_logging_and_durable_writes_stay_at_the_top():
    top = sorted(m.name for m in modules() if len(m.parts) == 1)
    assert top == ["__init__.py", "cli.py", "config.py", "disk.py", "logs.py"]


@pytest.mark.parametrize("room", [room for rooms in FLOORS for room in rooms])
def test_the_room_imports_only_downward(room):
    floor = FLOOR[room]
    wrong = {}
    for module in modules():
        if room_of(module) != room:
            continue
        for other in rooms_imported((PACKAGE / module).read_text(), module):
            level = FLOOR.get(other)
            if level is None or level > floor or (level == floor and floor <= SEALED):
                wrong.setdefault(str(module), []).append(other)
    assert wrong == {}, f"{room} (floor {floor}) imports upward or sideways: {wrong}"


@pytest.mark.parametrize("source, where, expected", [
    ("from ..sim.sensor import SimSensorProcess\n", "hw/probe.py", {"sim"}),
    ("from firmware_py.service import loop\n", "view/probe.py", {"service"}),
    ("from firmware_py import cli\n", "rules/probe.py", {"cli"}),
    ("import firmware_py.web.server\n", "store/probe.py", {"web"}),
    ("def f():\n    from ..ai import choose\n", "companion/probe.py", {"ai"}),
    ("from .sensor_link import X\nfrom . import parts\n", "hw/probe.py", set()),
    ("from .disk import write_durably\n", "config.py", {"disk"}),
    ("from ...x import y\n", "hw/probe.py", {"firmware_py"}),
])
def test_the_checker_sees_each_kind_of_import(source, where, expected):
    """Control: the checker finds upward imports written every way, on source text alone."""
    assert rooms_imported(source, Path(where)) == expected


def test_the_checker_refuses_an_upward_and_a_sideways_import():
    """Control: the rule itself refuses hw -> sim (upward) and hw -> view (a neighbour on
    a sealed floor), and lets sim -> web (neighbours on floor 4) through."""
    def refused(room: str, other: str) -> bool:
        level, floor = FLOOR[other], FLOOR[room]
        return level > floor or (level == floor and floor <= SEALED)
    assert refused("hw", "sim") and refused("hw", "view") and refused("companion", "view")
    assert not refused("sim", "web") and not refused("service", "config")
