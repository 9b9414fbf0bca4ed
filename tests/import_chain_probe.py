"""Run the service's own LED and button start-up code as on one Raspberry Pi model.

Usage: python tests/import_chain_probe.py BOARD_ID REVISION ROUTE

Blinka's board detection is pointed at the model (BLINKA_FORCEBOARD and the
revision code platformdetect reads from /proc/cpuinfo on a Pi). Then the
service's real start-up functions run: ``backends._pixels`` for the LED
route ("neopixel", "neopixel_spi" or "none") and ``backends._pin_factory
("lgpio")`` for the buttons. Whenever that code fails because a module is
not installed here (a Pi-only library such as gpiod or _rpi_ws281x), the
module is recorded, a permissive stand-in takes its place, the modules
imported so far are forgotten, and the run starts again, until the imports
go through. Optional imports that the libraries guard with try/except are
therefore not recorded. Errors after the imports (no /dev/spidev0.0 on this
machine) are expected and ignored. Prints one JSON object:

* ``missing``: the top-level modules the start-up code needs that this machine lacks;
* ``imported``: every top-level module imported, for the test to check the rest;
* ``declared``: Blinka's own (import name, pip requirement) list for the board.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
import types

BOARD, REVISION, ROUTE = sys.argv[1:4]
STAND_INS: set[str] = set()


class _Anything:
    """Stands in for any attribute, call or value of a module that is not installed."""

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        return self

    def __bool__(self):
        return True

    def __iter__(self):
        return iter(())


class _StandIn(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Provides a stand-in for each module named in STAND_INS (and its submodules)."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in STAND_INS:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return _StandIn(spec.name)

    def exec_module(self, module):
        module.__path__ = []


def _missing_name(exc: BaseException) -> str | None:
    """The top-level name of a ModuleNotFoundError in ``exc``'s chain, if any."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            return exc.name.split(".")[0]
        exc = exc.__cause__ or exc.__context__
    return None


def _start_up() -> None:
    from firmware_py.hw import backends
    leds = {"driver": ROUTE, "pin": "D10" if ROUTE == "neopixel_spi" else "D18",
            "count": 3, "brightness": 0.25, "order": "GRB"}
    for action in ((lambda: backends._pixels({"leds": leds}, sim=False)) if ROUTE != "none" else None,
                   lambda: backends._pin_factory("lgpio")):
        if action is None:
            continue
        try:
            action()
        except Exception as exc:  # noqa: BLE001  devices are absent here; only imports matter
            name = _missing_name(exc)
            if name is not None and name not in STAND_INS:
                raise ModuleNotFoundError(name=name) from exc


def main() -> None:
    os.environ["BLINKA_FORCEBOARD"] = BOARD
    os.environ["BLINKA_FORCECHIP"] = "BCM2XXX"
    os.environ["BLINKA_SKIP_DEPENDENCY_CHECK"] = "1"
    import adafruit_platformdetect.board as detect_board
    detect_board.Board._pi_rev_code = lambda self: REVISION
    sys.meta_path.insert(0, _StandInFinder())
    baseline = dict(sys.modules)
    for _ in range(20):
        try:
            _start_up()
            break
        except ModuleNotFoundError as exc:
            STAND_INS.add(exc.name)
            for name in set(sys.modules) - set(baseline):
                del sys.modules[name]
    else:
        raise SystemExit(f"the imports never went through; stand-ins so far: {sorted(STAND_INS)}")
    imported = sorted({n.split(".")[0] for n in sys.modules} - set(sys.stdlib_module_names))
    from adafruit_blinka.agnostic import detector
    from adafruit_blinka.platform_dependencies import get_platform_dependencies
    print(json.dumps({"missing": sorted(STAND_INS), "imported": imported,
                      "declared": get_platform_dependencies(detector)}))


main()
