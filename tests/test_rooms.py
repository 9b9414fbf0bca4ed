"""Rooms import only downward (rules <- companion <- view/hw/store <- service <- web/club/ai/sim
<- commands): checked on the import statements of the rooms this part of the code owns."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "firmware_py"


def imported(path: Path) -> set[str]:
    """The firmware_py rooms (first package below firmware_py) a module imports from."""
    tree = ast.parse(path.read_text())
    depth = len(path.relative_to(PACKAGE).parts) - 1          # folders below firmware_py
    rooms = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:                                     # relative: climb to firmware_py
                parts = [] if node.level > depth else None
                if parts is None:
                    continue                                   # inside its own room
                name = node.module or ""
                rooms.add(name.split(".")[0] or (node.names[0].name if node.names else ""))
            elif (node.module or "").startswith("firmware_py."):
                rooms.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("firmware_py."):
                    rooms.add(alias.name.split(".")[1])
    return rooms


def _room_imports(room: str) -> dict[str, set[str]]:
    base = PACKAGE / room
    files = base.glob("*.py") if base.is_dir() else [PACKAGE / f"{room}.py"]
    return {str(f.relative_to(PACKAGE)): imported(f) for f in files}


def test_hw_does_not_import_the_simulator():
    for name, rooms in _room_imports("hw").items():
        assert not rooms & {"sim", "web", "club", "ai", "commands", "service", "app"}, (name, rooms)


def test_the_live_feed_sits_below_web_club_and_sim():
    for name, rooms in _room_imports("feed").items():
        assert rooms <= {"rules", "disk", "companion", "view"}, (name, rooms)


def test_web_and_store_import_only_downward():
    for name, rooms in _room_imports("web").items():
        assert not rooms & {"sim", "club", "ai", "commands", "hw", "service", "app"}, (name, rooms)
    for name, rooms in _room_imports("store").items():
        assert rooms <= {"rules", "disk", "companion"}, (name, rooms)


def test_the_checker_sees_an_upward_import(tmp_path):
    """Control: a module of hw/ importing sim/ is found."""
    fake = PACKAGE / "hw" / "_upward_probe.py"
    fake.write_text("from ..sim.sensor import SimSensorProcess\n")
    try:
        assert "sim" in imported(fake)
    finally:
        fake.unlink()
