"""The table the simulated people play at: a real
:class:`~firmware_py.service.loop.Service` on a stepping clock, the two physical time
tokens, and the buttons and sensor readings posted as the hardware would post them
(see :mod:`firmware_py.sim.people`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config import validate
from ..hw.backends import Parts
from ..hw.parts import RawButton
from ..hw.sensor_link import SensorOccupancy
from ..rules import deal, load_spec
from ..service.loop import Service


@dataclass
class Clock:
    """The stepping clock (seconds)."""

    t: float = 1000.0

    def __call__(self) -> float:
        return self.t


@dataclass
class Board:
    """Where the two physical time tokens are: a space each, None while in the air."""

    at: list = field(default_factory=lambda: [0, 0])

    def occupied(self, extra=()) -> frozenset[int]:
        """What a perfect sensor reads (``extra``: spaces a sliding token also covers)."""
        return frozenset([s for s in self.at if s is not None] + list(extra))


class Table:
    """The companion and the physical table: buttons, tokens, the clock."""

    def __init__(self, folder: Path, game: str, seed: int, cfg: dict | None = None):
        self.clock = Clock()
        self.seed = seed
        cfg = cfg or validate({"backend": "sim"}, "people")
        self.cfg = cfg
        self.service = Service(cfg, Parts(), folder, clock=self.clock,
                               deal=lambda g: deal(load_spec(g), seed))
        self.service.resume()
        self.board = Board()
        self._seq = 0
        self._shown: frozenset[int] | None = None
        self.shown = 0
        self.answered = 0
        self._asked = None
        self.service.step()

    # ----- time and inputs ----------------------------------------------------------------
    def wait(self, dt: float) -> None:
        """Let ``dt`` seconds pass, running the loop at every timer it asks for."""
        end = self.clock.t + dt
        while True:
            due = self.service.step()
            self._count_question()
            if due is None or self.clock.t + max(due, 0.001) >= end:
                break
            self.clock.t += max(due, 0.001)
        self.clock.t = end
        self.service.step()
        self._count_question()

    def _count_question(self) -> None:
        screen = self.screen
        asked = None
        if screen.kind == "prompt" and screen.options:
            asked = (screen.options, screen.lines)
        if asked is not None and asked != self._asked:
            self.shown += 1
        self._asked = asked

    def press(self, button: str, hold: bool = False) -> None:
        """A short press (or a hold) of ``button``."""
        self.service.post(RawButton(button, True, self.clock()))
        self.wait(self.cfg["buttons"]["hold_seconds"] + 0.1 if hold else 0.05)
        self.service.post(RawButton(button, False, self.clock()))
        self.wait(0.05)

    def show(self, extra=(), dwell: float = 0.0) -> None:
        """Post what the sensor reads now (when it changed), then wait ``dwell``."""
        now = self.board.occupied(extra)
        if now != self._shown:
            self._shown = now
            self._seq = (self._seq + 1) % 65536
            self.service.post(SensorOccupancy(now, self._seq, False, self.clock()))
        self.wait(dwell)

    # ----- what the table shows ------------------------------------------------------------
    @property
    def screen(self):
        """The OLED screen model shown now."""
        return self.service.status.screen

    @property
    def lights(self):
        """The LED lights shown now."""
        return self.service.status.lights
